// hg_concat_beats: channel concatenation of N folded streams, for a concat whose output pixel is too wide
// for one beat (hlsgen/hw/layers/channels.py): every input and the output carry W-bit beats of the same
// fold, and every input's channel count is a multiple of it, so an output pixel is input 0's beats, then
// input 1's, ..., none realigned. Beat j of a pixel (j < BEATS) comes from the input k with
// ENDS[k-1] <= j < ENDS[k] (ENDS[N-1] = BEATS); in_data holds the N inputs' beats side by side (input 0
// lowest). One beat a cycle with all sides ready: PIXELS*BEATS cycles a frame (the cycle model).
// Registered output (latency 1 cycle); in_ready depends on out_ready and state only.
module hg_concat_beats #(
    parameter int N = 2,
    parameter int W = 8,      // bits of a beat
    parameter int BEATS = 2,  // beats of an output pixel
    parameter int CB = 2,     // bits of a beat index (j, ENDS): BEATS < 2**CB
    parameter logic [N*CB-1:0] ENDS = '0
) (
    input  logic           clk,
    input  logic           rst_n,
    input  logic [N*W-1:0] in_data,
    input  logic [N-1:0]   in_valid,
    output logic [N-1:0]   in_ready,
    output logic [W-1:0]   out_data,
    output logic           out_valid,
    input  logic           out_ready
);
    localparam int SB = N > 1 ? $clog2(N) : 1, LB = BEATS - 1;

    logic en, fire, last_j, last_of_sel;
    logic [CB-1:0] j;   // the beat of the output pixel
    logic [SB-1:0] sel; // the input it comes from
    logic [W-1:0] picked;

    assign en = !out_valid || out_ready;
    assign fire = en && in_valid[sel];
    assign last_j = j == LB[CB-1:0];
    always_comb begin
        picked = in_data[W-1:0];
        last_of_sel = 1'b0;
        for (int k = 0; k < N; k++) begin
            in_ready[k] = en && sel == k[SB-1:0];
            if (sel == k[SB-1:0]) begin
                picked = in_data[k * W +: W];
                last_of_sel = j + 1'b1 == ENDS[k * CB +: CB];
            end
        end
    end

    always_ff @(posedge clk) begin
        if (!rst_n) begin
            out_valid <= 1'b0;
            j <= '0;
            sel <= '0;
        end else if (en) begin
            out_valid <= fire;
            if (fire) begin
                j <= last_j ? '0 : j + 1'b1;
                sel <= last_j ? '0 : (last_of_sel ? sel + 1'b1 : sel);
            end
        end
    end

    always_ff @(posedge clk) begin
        if (fire) out_data <= picked;
    end
endmodule
