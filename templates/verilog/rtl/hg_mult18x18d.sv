// HG_MULT18X18D: the ECP5 sysDSP MULT18X18D as hg_mul uses it, scalar ports named as the primitive's:
// operand registers (REG_INPUTA_CLK, REG_INPUTB_CLK = "CLK0") and the output register (REG_OUTPUT_CLK =
// "CLK0"), no pipeline register, every register enabled by CE0 (REG_*_CE = "CE0") and cleared by RST0
// (RESETMODE "SYNC"); P = A x B, A signed when SIGNEDA, B when SIGNEDB. Simulators run this model.
// `hlsgen pnr` reads this file with `read_verilog -lib` (a black box, so synth_ecp5 keeps the cell and
// its ABC9 pass does not see a parameterised DSP block, which makes Yosys 0.70 abort), sets those
// parameters on every instance and renames it MULT18X18D before nextpnr-ecp5 (hlsgen/tools/pnr.py).
/* verilator lint_off DECLFILENAME */
module HG_MULT18X18D (
    input  logic CLK0, CE0, RST0, SIGNEDA, SIGNEDB,
    input  logic A0, A1, A2, A3, A4, A5, A6, A7, A8, A9, A10, A11, A12, A13, A14, A15, A16, A17,
    input  logic B0, B1, B2, B3, B4, B5, B6, B7, B8, B9, B10, B11, B12, B13, B14, B15, B16, B17,
    output logic P0, P1, P2, P3, P4, P5, P6, P7, P8, P9, P10, P11, P12, P13, P14, P15, P16, P17, P18, P19, P20,
                 P21, P22, P23, P24, P25, P26, P27, P28, P29, P30, P31, P32, P33, P34, P35
);
    logic [17:0] a, b, ar, br;
    logic [35:0] pr;
    logic sa, sb;
    assign a = {A17, A16, A15, A14, A13, A12, A11, A10, A9, A8, A7, A6, A5, A4, A3, A2, A1, A0};
    assign b = {B17, B16, B15, B14, B13, B12, B11, B10, B9, B8, B7, B6, B5, B4, B3, B2, B1, B0};
    always_ff @(posedge CLK0) begin
        if (RST0) begin
            ar <= '0;
            br <= '0;
            pr <= '0;
        end else if (CE0) begin
            ar <= a;
            br <= b;
            sa <= SIGNEDA;
            sb <= SIGNEDB;
            pr <= 36'($signed({sa & ar[17], ar}) * $signed({sb & br[17], br}));
        end
    end
    assign {P35, P34, P33, P32, P31, P30, P29, P28, P27, P26, P25, P24, P23, P22, P21, P20, P19, P18, P17, P16,
            P15, P14, P13, P12, P11, P10, P9, P8, P7, P6, P5, P4, P3, P2, P1, P0} = pr;
endmodule
/* verilator lint_on DECLFILENAME */
