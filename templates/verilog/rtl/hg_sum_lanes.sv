// hg_sum_lanes: PE requant lanes of an average pool (hg_pool, hg_gap). Lane p requantizes sums[p]
// of channel nf*PE + p: v = (s - X_OFF[c]) * mult[c], y = clamp(ZP + round_shift(v, shift[c]), LO, HI)
// (hg_requant, RQD = 7 stages gated by en), its parameters read from small ROMs at the fold index nf
// (hg_table: N = NF folds, channels beyond C read 0).
module hg_sum_lanes #(
    parameter int C = 4, parameter int PE = 4, parameter int NF = 1, parameter int NB = 1, parameter int AB = 8,
    parameter int OB = 8, parameter int MB = 16, parameter int SHB = 6, parameter int MAX_SHIFT = 40,
    parameter int MIN_SHIFT = 0, parameter bit ROUND_UP = 1'b0, parameter int ZP = 0, parameter int LO = -128,
    parameter int HI = 127,
    parameter logic [C*MB-1:0] MULT = '0,
    parameter logic [C*SHB-1:0] SHIFT = '0,
    parameter logic [C*32-1:0] X_OFF = '0  // taps * x_zp[c], 32-bit two's complement each
) (
    input  logic             clk,
    input  logic             en,
    input  logic [PE*AB-1:0] sums,
    input  logic [NB-1:0]    nf,
    output logic [PE*OB-1:0] y
);
    localparam int XB = AB + 1;  // a sum minus taps * x_zp
    for (genvar p = 0; p < PE; p++) begin : g_lane
        logic [MB-1:0] m;
        logic [SHB-1:0] sh;
        /* verilator lint_off UNUSEDSIGNAL */
        logic [31:0] off;  // XB bits of it are used
        /* verilator lint_on UNUSEDSIGNAL */
        logic signed [XB-1:0] xs;
        hg_table #(.N(NF), .W(MB), .IW(NB), .STRIDE(PE), .FIRST(p), .COUNT(C), .VALUES(MULT))
            u_m (.idx(nf), .value(m));
        hg_table #(.N(NF), .W(SHB), .IW(NB), .STRIDE(PE), .FIRST(p), .COUNT(C), .VALUES(SHIFT))
            u_sh (.idx(nf), .value(sh));
        hg_table #(.N(NF), .W(32), .IW(NB), .STRIDE(PE), .FIRST(p), .COUNT(C), .VALUES(X_OFF))
            u_off (.idx(nf), .value(off));
        assign xs = {sums[p * AB + AB - 1], sums[p * AB +: AB]} - off[XB-1:0];
        hg_requant #(
            .XB(XB), .MB(MB), .SHB(SHB), .MAX_SHIFT(MAX_SHIFT), .MIN_SHIFT(MIN_SHIFT), .ROUND_UP(ROUND_UP), .OB(OB),
            .ZP(ZP), .LO(LO), .HI(HI)
        ) u_rq (
            .clk(clk), .en(en), .x(xs), .m(m), .m_neg(m),
            .sx(10'sd0), .sm(16'sd0), .b(2'sd0), .sh(sh), .y(y[p * OB +: OB])
        );
    end
endmodule
