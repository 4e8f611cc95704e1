// hg_slice: channels [start, end) of a stream of whole pixels (hlsgen/hw/layers/channels.py): out_data
// is in_data[LO +: OW] with LO = start * bits and OW = (end - start) * bits. One pixel a cycle with
// both sides ready; registered output (latency 1 cycle); in_ready depends on out_ready and state only.
module hg_slice #(
    parameter int IW = 16,  // bits of the input pixel
    parameter int LO = 0,   // first bit taken
    parameter int OW = 8    // bits of the output pixel
) (
    input  logic          clk,
    input  logic          rst_n,
    /* verilator lint_off UNUSEDSIGNAL */  // the channels outside [start, end) are dropped
    input  logic [IW-1:0] in_data,
    /* verilator lint_on UNUSEDSIGNAL */
    input  logic          in_valid,
    output logic          in_ready,
    output logic [OW-1:0] out_data,
    output logic          out_valid,
    input  logic          out_ready
);
    logic fire;

    assign in_ready = !out_valid || out_ready;
    assign fire = in_valid && in_ready;

    always_ff @(posedge clk) begin
        if (!rst_n) out_valid <= 1'b0;
        else if (in_ready) out_valid <= in_valid;
    end

    always_ff @(posedge clk) begin
        if (fire) out_data <= in_data[LO +: OW];
    end
endmodule
