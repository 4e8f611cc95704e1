// hg_table: one entry of a constant per-channel table, read combinationally. Entry k is the channel
// k*STRIDE + FIRST of VALUES (COUNT channels of W bits, channel c at VALUES[c*W +: W]); 0 for a channel
// at or beyond COUNT (a last fold that is not full). A unit with PE lanes instantiates one table per
// lane and parameter (STRIDE = PE, FIRST = the lane), indexed by its output fold.
// It is a ROM (an array read, initialized from the parameter): Yosys maps it as a memory (a balanced
// decoder over the index bits, 2 LUT6 + a MUXF7 per bit for 65..128 entries) and Verilator as one
// indexed load. A chain of `if (idx == k) v = VALUES[...]` selections, the form this replaces, made
// logic cones as deep as the table is long: 640 entries took the yowasp Yosys out of memory in ABC9.
module hg_table #(
    parameter int N = 1,  // entries (the folds)
    parameter int W = 1,
    parameter int IW = 1,  // index bits (at least $clog2(N); the bits above are 0 for every index in use)
    parameter int STRIDE = 1, parameter int FIRST = 0, parameter int COUNT = 1,
    parameter logic [COUNT*W-1:0] VALUES = '0
) (
    /* verilator lint_off UNUSEDSIGNAL */
    input  logic [IW-1:0] idx,
    /* verilator lint_on UNUSEDSIGNAL */
    output logic [W-1:0]  value
);
    localparam int RB = N > 1 ? $clog2(N) : 1;
    logic [W-1:0] rom [0:N-1];
    initial begin
        for (int k = 0; k < N; k++)
            rom[k] = k * STRIDE + FIRST < COUNT ? VALUES[((k * STRIDE + FIRST) % COUNT) * W +: W] : '0;
    end
    if (N > 1) begin : g_many
        assign value = rom[idx[RB-1:0]];
    end else begin : g_one
        assign value = rom[0];
    end
endmodule
