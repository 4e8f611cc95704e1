// hg_convert: a data-width converter between two folds of one stream (hlsgen/hw/convert.py): an
// hg_split (HAS_SPLIT) then an hg_join (HAS_JOIN) over sub-beats of W bits in groups of S (a pixel's
// sub-beats). A fold A -> B is a split by A/B, a join by B/A, or a split to gcd(A, B) channels then a
// join; the two steps are joined by a plain valid/ready wire (each holds its own beat register).
module hg_convert #(
    parameter int W = 8, parameter int S = 1,
    parameter bit HAS_SPLIT = 1'b1, parameter int SPLIT_K = 1,
    parameter bit HAS_JOIN = 1'b0, parameter int JOIN_K = 1,
    parameter int IN_WIDTH = W * SPLIT_K, parameter int OUT_WIDTH = W * JOIN_K
) (
    input  logic                 clk,
    input  logic                 rst_n,
    input  logic [IN_WIDTH-1:0]  in_data,
    input  logic                 in_valid,
    output logic                 in_ready,
    output logic [OUT_WIDTH-1:0] out_data,
    output logic                 out_valid,
    input  logic                 out_ready
);
    logic [W-1:0] mid_data;  // one sub-beat between the steps
    logic mid_valid, mid_ready;

    if (HAS_SPLIT) begin : g_split
        hg_split #(.W(W), .S(S), .K(SPLIT_K)) u_split (
            .clk(clk), .rst_n(rst_n), .in_data(in_data), .in_valid(in_valid), .in_ready(in_ready),
            .out_data(mid_data), .out_valid(mid_valid), .out_ready(mid_ready)
        );
    end else begin : g_nosplit
        assign mid_data = in_data;
        assign mid_valid = in_valid;
        assign in_ready = mid_ready;
    end

    if (HAS_JOIN) begin : g_join
        hg_join #(.W(W), .S(S), .K(JOIN_K)) u_join (
            .clk(clk), .rst_n(rst_n), .in_data(mid_data), .in_valid(mid_valid), .in_ready(mid_ready),
            .out_data(out_data), .out_valid(out_valid), .out_ready(out_ready)
        );
    end else begin : g_nojoin
        assign out_data = mid_data;
        assign out_valid = mid_valid;
        assign mid_ready = out_ready;
    end
endmodule
