// hg_requant: one lane of the requant epilogue (hlsgen/numerics.py, docs/numerics.md), 2 stages.
//   v = x * (m_neg if HAS_NEG and x*m < 0 else m)  [+ sx * sm  if HAS_SKIP]  [+ b  if HAS_BIAS]
//   y = clamp(ZP + round_shift(v, sh), LO, HI)
// (b: the step-2 bias B2 of a two-step epilogue, already at the scale 2^sh of v.)
// round_shift rounds v / 2^sh to the nearest integer, ties to even (ROUND_UP = 0) or toward +inf
// (ROUND_UP = 1). x, m, sx, sm are signed; y is the OB-bit two's complement (or unsigned) code.
// Exact widths: the products are XB x MB and SXB x SMB signed multiplies; the shift amount is known to
// lie in MIN_SHIFT .. MAX_SHIFT, so the shifter only spans sh - MIN_SHIFT; rounding is one add,
//   round_shift(v, s) = (v + 2^(s-1) - 1 + v[s]) >>> s   (ties to even; + 2^(s-1) for half up),
// and the clamp compares q against LO - ZP and HI - ZP in just the bits q and the bounds need.
// Stage registers advance when `en` is high; the caller keeps the matching valid bits.
module hg_requant #(
    parameter int XB = 20, parameter int MB = 16,
    parameter bit HAS_NEG = 1'b0,
    parameter bit HAS_SKIP = 1'b0, parameter int SXB = 10, parameter int SMB = 16,
    parameter bit HAS_BIAS = 1'b0, parameter int BB = 2,
    parameter int SHB = 6, parameter int MAX_SHIFT = 40, parameter int MIN_SHIFT = 0,
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
    localparam int VB = (P12 > BB ? P12 : BB) + 1;                      // v
    localparam int UB = (VB > MAX_SHIFT + 1 ? VB : MAX_SHIFT + 1) + 1;  // v + rounding offset
    localparam int QB = UB - MIN_SHIFT;                                 // q = u >>> sh
    localparam int DSH = MAX_SHIFT - MIN_SHIFT;
    localparam int DB0 = DSH > 0 ? $clog2(DSH + 1) : 1;
    localparam int DB = DB0 < SHB ? DB0 : SHB;                          // sh - MIN_SHIFT
    localparam int LZ = LO - ZP, HZ = HI - ZP;                          // clamp bounds of q
    localparam int LZA = LZ < 0 ? -LZ : LZ, HZA = HZ < 0 ? -HZ : HZ;
    localparam int RB = $clog2((LZA > HZA ? LZA : HZA) + 2) + 1;        // signed bits holding both
    localparam int KB0 = QB > RB ? QB : RB;
    localparam int KB = (KB0 > OB ? KB0 : OB) + 1;                      // compare width
    localparam int KBX = KB > 32 ? KB : 32;
    localparam logic [31:0] LZV = LZ, HZV = HZ, ZPV = ZP;
    localparam logic [KBX-1:0] LZX = {{(KBX - 31){LZV[31]}}, LZV[30:0]};
    localparam logic [KBX-1:0] HZX = {{(KBX - 31){HZV[31]}}, HZV[30:0]};

    logic signed [P1-1:0] p1;
    logic signed [P2-1:0] p2;
    logic signed [MB-1:0] mm;
    logic signed [VB-1:0] v_a;
    logic signed [UB-1:0] rnd;
    /* verilator lint_off UNUSEDSIGNAL */
    logic signed [UB-1:0] u;  // bits below MIN_SHIFT only carry into q
    /* verilator lint_on UNUSEDSIGNAL */
    logic signed [QB-1:0] q;
    logic signed [KB-1:0] t, lo_k, hi_k;
    logic [DB-1:0] dsh_a;
    /* verilator lint_off UNUSEDSIGNAL */
    logic [SHB-1:0] sh_a, dsh;  // dsh: bits above DB are zero (sh <= MAX_SHIFT)
    /* verilator lint_on UNUSEDSIGNAL */
    logic odd;

    always_comb begin
        mm = (HAS_NEG && x != '0 && m != '0 && (x[XB-1] ^ m[MB-1])) ? m_neg : m;
        p1 = x * mm;
        p2 = '0;
        if (HAS_SKIP) p2 = sx * sm;  // (a ternary with '0 would make the product unsigned)
        dsh = sh - MIN_SHIFT[SHB-1:0];
    end

    always_ff @(posedge clk) begin
        if (en) begin
            v_a <= {{(VB - P1){p1[P1-1]}}, p1} + {{(VB - P2){p2[P2-1]}}, p2}
                   + (HAS_BIAS ? {{(VB - BB){b[BB-1]}}, b} : '0);
            sh_a <= sh;
            dsh_a <= dsh[DB-1:0];
        end
    end

    // stage B: u = v + 2^(sh-1) - 1 + v[sh] (half up: + 2^(sh-1)), q = u >>> sh, clamp, + ZP
    always_comb begin
        rnd = '0;
        odd = 1'b0;
        for (int i = MIN_SHIFT > 1 ? MIN_SHIFT : 1; i <= MAX_SHIFT; i++) begin  // sh lies in MIN_SHIFT .. MAX_SHIFT
            if ({{(32 - SHB){1'b0}}, sh_a} == i) begin
                rnd = ({{(UB - 1){1'b0}}, 1'b1} <<< (i - 1)) - {{(UB - 1){1'b0}}, !ROUND_UP};
                odd = v_a[i < VB ? i : VB - 1];
            end
        end
        u = {{(UB - VB){v_a[VB-1]}}, v_a} + rnd + {{(UB - 1){1'b0}}, (!ROUND_UP && odd)};
        q = $signed(u[UB-1:MIN_SHIFT]) >>> dsh_a;
        lo_k = LZX[KB-1:0];
        hi_k = HZX[KB-1:0];
        t = {{(KB - QB){q[QB-1]}}, q};
        if (t < lo_k) t = lo_k;
        if (t > hi_k) t = hi_k;
    end

    always_ff @(posedge clk) begin
        if (en) y <= t[OB-1:0] + ZPV[OB-1:0];
    end
endmodule
