// hg_join: width converter of folded streams (hlsgen/hw/convert.py), the inverse of hg_split: one
// sub-beat of W bits per input beat, wide beats of up to K sub-beats out. Sub-beats come in groups of
// S: each group becomes G = ceil(S/K) output beats, the first G-1 holding K sub-beats, the last
// L = S - (G-1)*K and zeros above; sub-beat j of a beat is out_data[j*W +: W]. Groups repeat.
// The first K-1 sub-beats of a beat wait in a shift register (newest on top); the beat's last sub-beat
// goes with them straight into the output register (latency 1 cycle after that sub-beat), shifted down
// by K-L sub-beats at a group's end (a constant shift: its top fills with zeros). The output register
// may be taken and refilled in the same cycle, and sub-beats other than a beat's last are taken while
// a full output beat waits, so with both sides ready one sub-beat enters every cycle, no bubbles.
// in_ready depends on out_ready (combinationally, as in hg_fork) and on state; out_* are registers.
// The counters are hg_subbeats'.
module hg_join #(
    parameter int W = 8,
    parameter int S = 1,
    parameter int K = 1
) (
    input  logic           clk,
    input  logic           rst_n,
    input  logic [W-1:0]   in_data,
    input  logic           in_valid,
    output logic           in_ready,
    output logic [K*W-1:0] out_data,
    output logic           out_valid,
    input  logic           out_ready
);
    localparam int G = (S + K - 1) / K;  // output beats per group
    localparam int L = S - (G - 1) * K;  // sub-beats of a group's last output beat, 1 .. K
    localparam int PAD = (K - L) * W;    // zero bits above them

    logic [K*W-1:0] beat;  // the output beat this cycle's sub-beat completes
    logic end_group, last, take;

    hg_subbeats #(.S(S), .K(K)) u_count (.clk(clk), .rst_n(rst_n), .step(take), .last(last), .end_group(end_group));
    assign in_ready = !last || !out_valid || out_ready;
    assign take = in_valid && in_ready;

    if (K == 1) begin : g_one
        assign beat = in_data;
    end else begin : g_many
        logic [(K-1)*W-1:0] held;  // the beat's sub-beats so far, the newest at the top
        if (K == 2) begin : g_two
            always_ff @(posedge clk) if (take && !last) held <= in_data;
        end else begin : g_shift
            always_ff @(posedge clk) if (take && !last) held <= {in_data, held[(K-1)*W-1:W]};
        end
        assign beat = {in_data, held};
    end

    always_ff @(posedge clk) begin
        if (take && last) out_data <= end_group ? beat >> PAD : beat;
    end

    always_ff @(posedge clk) begin
        if (!rst_n) out_valid <= 1'b0;
        else if (take && last) out_valid <= 1'b1;
        else if (out_ready) out_valid <= 1'b0;
    end
endmodule
