// hg_requant: one lane of the requant epilogue (hlsgen/numerics.py, docs/numerics.md), 2 stages.
//   v = x * (m_neg if HAS_NEG and x*m < 0 else m)  [+ sx * sm  if HAS_SKIP]  [+ b  if HAS_BIAS]
//   y = clamp(ZP + round_shift(v, sh), LO, HI)
// (b: the step-2 bias B2 of a two-step epilogue, already at the scale 2^sh of v.)
// round_shift rounds v / 2^sh to the nearest integer, ties to even (ROUND_UP = 0) or toward +inf
// (ROUND_UP = 1). x, m, sx, sm are signed; y is the OB-bit two's complement (or unsigned) code.
// Stage registers advance when `en` is high; the caller keeps the matching valid bits.
module hg_requant #(
    parameter int XB = 20, parameter int MB = 16,
    parameter bit HAS_NEG = 1'b0,
    parameter bit HAS_SKIP = 1'b0, parameter int SXB = 10, parameter int SMB = 16,
    parameter bit HAS_BIAS = 1'b0, parameter int BB = 2,
    parameter int SHB = 6, parameter int MAX_SHIFT = 40,
    parameter bit ROUND_UP = 1'b0,
    parameter int OB = 8, parameter int ZP = 0, parameter int LO = -128, parameter int HI = 127
) (
    input  logic                  clk,
    input  logic                  en,
    input  logic signed [XB-1:0]  x,
    input  logic signed [MB-1:0]  m,
    input  logic signed [MB-1:0]  m_neg,
    input  logic signed [SXB-1:0] sx,
    input  logic signed [SMB-1:0] sm,
    input  logic signed [BB-1:0]  b,
    input  logic [SHB-1:0]        sh,
    output logic [OB-1:0]         y
);
    localparam int P1 = XB + MB, P2 = SXB + SMB;
    localparam int P12 = (P1 > P2 ? P1 : P2) + 1;
    localparam int VB0 = (P12 > BB ? P12 : BB) + 1;
    localparam int VB = VB0 > MAX_SHIFT + 2 ? VB0 : MAX_SHIFT + 2;  // sh - 1 always indexes v
    localparam int CB = (VB > 32 ? VB : 32) + 2;                     // room for ZP + q and LO/HI

    logic signed [P1-1:0] p1;
    logic signed [P2-1:0] p2;
    logic signed [MB-1:0] mm;
    logic signed [VB-1:0] v_a, q, mask;
    logic [SHB-1:0] sh_a;
    logic signed [CB-1:0] t, lo_c, hi_c;
    logic neg, rbit, sticky, up;
    int s1;

    always_comb begin
        neg = HAS_NEG && x != '0 && m != '0 && (x[XB-1] ^ m[MB-1]);
        mm = neg ? m_neg : m;
        p1 = {{MB{x[XB-1]}}, x} * {{XB{mm[MB-1]}}, mm};
        p2 = HAS_SKIP ? {{SMB{sx[SXB-1]}}, sx} * {{SXB{sm[SMB-1]}}, sm} : '0;
    end

    always_ff @(posedge clk) begin
        if (en) begin
            v_a <= {{(VB - P1){p1[P1-1]}}, p1} + {{(VB - P2){p2[P2-1]}}, p2}
                   + (HAS_BIAS ? {{(VB - BB){b[BB-1]}}, b} : '0);
            sh_a <= sh;
        end
    end

    always_comb begin
        s1 = {{(32 - SHB){1'b0}}, sh_a} - 1;
        q = v_a >>> sh_a;
        mask = '0;
        rbit = 1'b0;
        if (sh_a != '0) begin
            rbit = v_a[s1];
            mask = ({{(VB - 1){1'b0}}, 1'b1} << s1) - 1'b1;
        end
        sticky = (v_a & mask) != '0;
        up = ROUND_UP ? rbit : rbit && (sticky || q[0]);
        lo_c = {{(CB - 32){LO[31]}}, LO};
        hi_c = {{(CB - 32){HI[31]}}, HI};
        t = {{(CB - 32){ZP[31]}}, ZP} + {{(CB - VB){q[VB-1]}}, q} + {{(CB - 1){1'b0}}, up};
        if (t < lo_c) t = lo_c;
        if (t > hi_c) t = hi_c;
    end

    always_ff @(posedge clk) begin
        if (en) y <= t[OB-1:0];
    end
endmodule
