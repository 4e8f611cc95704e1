// hg_slice_beats: channels [start, end) of a folded stream, for a slice whose input pixel is too wide for
// one beat (hlsgen/hw/layers/channels.py): the fold divides start and end - start, so the output is the
// beats FIRST..LAST of each input pixel's IN_BEATS, as they are; the others are read and dropped. One
// input beat a cycle with both sides ready: PIXELS*IN_BEATS cycles a frame (the cycle model). Registered
// output (latency 1 cycle); in_ready depends on out_ready and state only.
module hg_slice_beats #(
    parameter int W = 8,         // bits of a beat
    parameter int IN_BEATS = 2,  // beats of an input pixel
    parameter int FIRST = 0,     // the first beat kept
    parameter int LAST = 0       // the last beat kept
) (
    input  logic         clk,
    input  logic         rst_n,
    input  logic [W-1:0] in_data,
    input  logic         in_valid,
    output logic         in_ready,
    output logic [W-1:0] out_data,
    output logic         out_valid,
    input  logic         out_ready
);
    localparam int JB = $clog2(IN_BEATS + 1), LB = IN_BEATS - 1;

    logic fire, kept;
    logic [JB-1:0] j;  // the beat of the input pixel

    assign in_ready = !out_valid || out_ready;
    assign fire = in_valid && in_ready;
    assign kept = j >= FIRST[JB-1:0] && j <= LAST[JB-1:0];

    always_ff @(posedge clk) begin
        if (!rst_n) begin
            out_valid <= 1'b0;
            j <= '0;
        end else if (in_ready) begin
            out_valid <= fire && kept;
            if (fire) j <= j == LB[JB-1:0] ? '0 : j + 1'b1;
        end
    end

    always_ff @(posedge clk) begin
        if (fire && kept) out_data <= in_data;
    end
endmodule
