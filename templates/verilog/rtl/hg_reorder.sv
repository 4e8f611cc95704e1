// hg_reorder: a frame buffer between a mid-network Transpose/Reshape and a layer that reads pixels
// in raster order with channels innermost. Write phase: IN_P beats of IN_C codes stored in arrival
// order (one beat per cycle). Read phase: ELEMENTS codes, one per cycle; element k is arrival
// element (word PERM_WORD[k], lane PERM_LANE[k]), read from MEM_FILE ($readmemh: one word per
// element, lane in the low LB bits, word above). Every OUT_C codes form an output beat.
// One frame at a time: IN_P + ELEMENTS cycles per frame.
module hg_reorder #(
    parameter int IN_P = 16, parameter int IN_C = 4, parameter int OUT_C = 4, parameter int B = 8,
    parameter int ELEMENTS = 64, parameter int WB = 4, parameter int LB = 2, parameter int KB = 6,
    parameter int CB = 2,
    parameter MEM_FILE = ""
) (
    input  logic              clk,
    input  logic              rst_n,
    input  logic [IN_C*B-1:0] in_data,
    input  logic              in_valid,
    output logic              in_ready,
    output logic [OUT_C*B-1:0] out_data,
    output logic              out_valid,
    input  logic              out_ready
);
    localparam int LAST_W = IN_P - 1, LAST_K = ELEMENTS - 1, LAST_C = OUT_C - 1;
    logic [IN_C*B-1:0] frame [0:IN_P-1];
    logic [WB+LB-1:0] perm [0:ELEMENTS-1];
    initial if (MEM_FILE != "") $readmemh(MEM_FILE, perm);

    logic reading;  // 0: write phase, 1: read phase
    logic [WB-1:0] wp;
    logic [KB-1:0] k;
    logic [CB-1:0] c;
    logic [OUT_C*B-1:0] acc, beat;
    logic [WB+LB-1:0] where;
    logic [IN_C*B-1:0] word;
    logic [B-1:0] code;
    logic step;

    assign in_ready = !reading;
    assign where = perm[k];
    assign word = frame[where[WB+LB-1:LB]];
    assign code = word[where[LB-1:0] * B +: B];
    assign step = reading && (!out_valid || out_ready);

    always_ff @(posedge clk) begin
        if (in_valid && !reading) frame[wp] <= in_data;
    end

    always_ff @(posedge clk) begin
        if (!rst_n) begin
            reading <= 1'b0;
            wp <= '0;
            k <= '0;
            c <= '0;
            out_valid <= 1'b0;
        end else begin
            if (out_valid && out_ready) out_valid <= 1'b0;
            if (in_valid && !reading) begin
                wp <= wp == LAST_W[WB-1:0] ? '0 : wp + 1'b1;
                if (wp == LAST_W[WB-1:0]) reading <= 1'b1;
            end
            if (step) begin
                c <= c == LAST_C[CB-1:0] ? '0 : c + 1'b1;
                k <= k == LAST_K[KB-1:0] ? '0 : k + 1'b1;
                if (c == LAST_C[CB-1:0]) out_valid <= 1'b1;
                if (k == LAST_K[KB-1:0]) reading <= 1'b0;
            end
        end
    end

    always_comb begin
        beat = acc;
        beat[c * B +: B] = code;
    end

    always_ff @(posedge clk) begin
        if (step) begin
            acc <= beat;
            if (c == LAST_C[CB-1:0]) out_data <= beat;
        end
    end
endmodule
