// hg_concat: channel concatenation of N streams of whole pixels (hlsgen/hw/layers/channels.py). Each
// input beat holds one pixel of that input's codes; in_data carries the N beats side by side (input 0
// in the low bits), which is exactly the output pixel: input 0's channels first. A pixel moves when
// every input holds one and the output register is free: one pixel a cycle with all sides ready.
// Registered output (latency 1 cycle); in_ready depends on every in_valid and on out_ready (as
// hg_eltwise's a_ready on b_valid), and nothing goes from in_* to out_* without a register.
module hg_concat #(
    parameter int N = 2,
    parameter int W = 16  // bits of the output pixel: the sum of the inputs' beat widths
) (
    input  logic         clk,
    input  logic         rst_n,
    input  logic [W-1:0] in_data,
    input  logic [N-1:0] in_valid,
    output logic [N-1:0] in_ready,
    output logic [W-1:0] out_data,
    output logic         out_valid,
    input  logic         out_ready
);
    logic en, fire;

    assign en = !out_valid || out_ready;
    assign fire = en && &in_valid;
    assign in_ready = {N{fire}};

    always_ff @(posedge clk) begin
        if (!rst_n) out_valid <= 1'b0;
        else if (en) out_valid <= fire;
    end

    always_ff @(posedge clk) begin
        if (fire) out_data <= in_data;
    end
endmodule
