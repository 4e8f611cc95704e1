// hg_split: width converter of folded streams (hlsgen/hw/convert.py): wide beats of up to K sub-beats
// of W bits in, one sub-beat per beat out. Sub-beats come in groups of S (one pixel's share of the
// stream): a group is G = ceil(S/K) input beats, the first G-1 holding K sub-beats, the last
// L = S - (G-1)*K; sub-beat j of a beat is in_data[j*W +: W] and the bits above the L-th sub-beat of a
// group's last beat are padding, dropped. Output: the S sub-beats of each group in order; groups repeat.
// The input beat sits in a shift register whose low W bits are out_data (registered: latency 1 cycle).
// The next input beat is taken in the cycle the current one's last sub-beat leaves, so with both sides
// ready one sub-beat leaves every cycle, no bubbles. in_ready depends on out_ready (combinationally,
// as in hg_fork) and on state; nothing goes from in_* to out_* without a register. The counters are
// hg_subbeats'.
module hg_split #(
    parameter int W = 8,
    parameter int S = 1,
    parameter int K = 1
) (
    input  logic           clk,
    input  logic           rst_n,
    input  logic [K*W-1:0] in_data,
    input  logic           in_valid,
    output logic           in_ready,
    output logic [W-1:0]   out_data,
    output logic           out_valid,
    input  logic           out_ready
);
    logic [K*W-1:0] beat;  // the current input beat, shifted down one sub-beat per output beat
    logic full;
    logic last, pop, load;
    /* verilator lint_off UNUSEDSIGNAL */
    logic end_group;  // the counters' (a split drops a group's padding by `last` alone)
    /* verilator lint_on UNUSEDSIGNAL */

    hg_subbeats #(.S(S), .K(K)) u_count (.clk(clk), .rst_n(rst_n), .step(pop), .last(last), .end_group(end_group));
    assign out_valid = full;
    assign out_data = beat[W-1:0];
    assign pop = full && out_ready;
    assign in_ready = !full || (out_ready && last);
    assign load = in_valid && in_ready;

    always_ff @(posedge clk) begin
        if (load) beat <= in_data;
        else if (pop) beat <= beat >> W;
    end

    always_ff @(posedge clk) begin
        if (!rst_n) full <= 1'b0;
        else if (load) full <= 1'b1;
        else if (pop && last) full <= 1'b0;
    end
endmodule
