// hg_requant: one lane of the requant epilogue (hlsgen/numerics.py, docs/numerics.md), DEPTH = 7 stages.
//   v = x * (m_neg if HAS_NEG and x*m < 0 else m)  [+ sx * sm  if HAS_SKIP]  [+ b  if HAS_BIAS]
//   y = clamp(ZP + round_shift(v, sh), LO, HI)
// (b: the step-2 bias B2 of a two-step epilogue, already at the scale 2^sh of v.)
// round_shift rounds v / 2^sh to the nearest integer, ties to even (ROUND_UP = 0) or toward +inf
// (ROUND_UP = 1). x, m, sx, sm are signed; y is the OB-bit two's complement (or unsigned) code.
// Exact widths: the products are XB x MB and SXB x SMB signed multiplies; the shift amount is known to
// lie in MIN_SHIFT .. MAX_SHIFT, so the shifter only spans sh - MIN_SHIFT; rounding is one add,
//   round_shift(v, s) = (v + 2^(s-1) - 1 + v[s]) >>> s   (ties to even; + 2^(s-1) for half up),
// and the clamp compares q against LO - ZP and HI - ZP in just the bits q and the bounds need.
// Pipeline (timing-driven: every multiplier has registered operands and a registered product):
//   1 operands: x, the selected multiplier mm (m_neg where x*m < 0), sx, sm, b, sh registered
//   2 products: x*mm as two multiplies of at most 18 bits of x (x[16:0] unsigned and x >>> 17, so each
//     is one 18x18 DSP when XB <= 35), sx*sm, registered
//   3 the two halves of x*mm summed (xh*mm*2^LB + xl*mm) and sx*sm + b, side by side: the products
//     leave their DSP blocks into one adder each (on ECP5 the DSP-to-fabric route and a 3-operand
//     carry chain did not fit one 8 ns cycle)
//   4 v = the two partial sums' sum; the rounding offset of sh decoded beside it
//   5 u = v + 2^(sh-1) - 1 + v[sh] (half up: + 2^(sh-1)), its bits from MIN_SHIFT up
//   6 q = u >>> sh
//   7 y = clamp(q, LO - ZP, HI - ZP) + ZP: both compares and q + ZP side by side, then one selection
// Stage registers advance when `en` is high; y follows x (and m .. sh) by DEPTH enabled cycles. The
// caller delays the matching valid bits, fold indices and skip codes by DEPTH (hg_delay); every caller
// spells the depth as its localparam RQD = 7 (keep them equal to DEPTH below).
module hg_requant #(
    parameter int XB = 20, parameter int MB = 16,
    parameter bit HAS_NEG = 1'b0,
    parameter bit HAS_SKIP = 1'b0, parameter int SXB = 10, parameter int SMB = 16,
    parameter bit HAS_BIAS = 1'b0, parameter int BB = 2,
    parameter int SHB = 6, parameter int MAX_SHIFT = 40, parameter int MIN_SHIFT = 0,
    parameter bit ROUND_UP = 1'b0,
    parameter int OB = 8, parameter int ZP = 0, parameter int LO = -128, parameter int HI = 127,
    parameter MUL_PRIM = ""  // hg_mul's PRIM: the DSP block the products use with its own registers
) (
    input  logic                  clk,
    input  logic                  en,
    input  logic signed [XB-1:0]  x,
    input  logic signed [MB-1:0]  m,
    input  logic signed [MB-1:0]  m_neg,
    /* verilator lint_off UNUSEDSIGNAL */
    input  logic signed [SXB-1:0] sx,  // unused without HAS_SKIP
    input  logic signed [SMB-1:0] sm,
    /* verilator lint_on UNUSEDSIGNAL */
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

    /* verilator lint_off UNUSEDPARAM */
    localparam int DEPTH = 7;  // the callers' RQD
    /* verilator lint_on UNUSEDPARAM */
    // x*mm in two products: x = xh*2^LB + xl with xl = x[LB-1:0] unsigned (LB = 17: an 18-bit signed
    // operand), xh = x >>> LB; one product when x fits 18 bits
    localparam int LB = XB > 18 ? 17 : 0;
    localparam int XHB = XB - LB;                   // bits of xh
    localparam int PH = XHB + MB, PL = LB + 1 + MB;  // the two products

    // stage 1: the operands (the products' own in hg_mul)
    logic signed [MB-1:0] mm;
    logic signed [BB-1:0] b_r, b_p;
    logic [SHB-1:0] sh_r, sh_p, sh_a;
    always_comb mm = (HAS_NEG && x != '0 && m != '0 && (x[XB-1] ^ m[MB-1])) ? m_neg : m;
    always_ff @(posedge clk) begin
        if (en) begin
            b_r <= b;
            sh_r <= sh;
        end
    end

    // stage 2: the products (hg_mul: stages 1 and 2) and the rounding offset 2^(sh-1) - 1 (half up: 2^(sh-1))
    logic signed [PH-1:0] ph_r;
    logic signed [P2-1:0] p2_r;
    hg_mul #(.AW(XHB), .BW(MB), .PW(PH), .PRIM(MUL_PRIM)) u_ph (
        .clk(clk), .en(en), .a(x[XB-1:LB]), .b(mm), .p(ph_r)
    );
    if (HAS_SKIP) begin : g_skip
        hg_mul #(.AW(SXB), .BW(SMB), .PW(P2), .PRIM(MUL_PRIM)) u_p2 (
            .clk(clk), .en(en), .a(sx), .b(sm), .p(p2_r)
        );
    end else begin : g_noskip
        assign p2_r = '0;
    end
    /* verilator lint_off UNUSEDSIGNAL */
    logic [SHB-1:0] dsh;  // bits above DB are zero (sh <= MAX_SHIFT)
    /* verilator lint_on UNUSEDSIGNAL */
    logic [DB-1:0] dsh_p, dsh_a, dsh_u;
    always_comb dsh = sh_r - MIN_SHIFT[SHB-1:0];
    always_ff @(posedge clk) begin
        if (en) begin
            b_p <= b_r;
            sh_p <= sh_r;
            dsh_p <= dsh[DB-1:0];
        end
    end

    // stage 3: s_x = xh*mm*2^LB + xl*mm and s_b = sx*sm + b (modulo 2^VB: v itself fits VB bits)
    logic signed [VB-1:0] s_x, s_b, s_xr, s_br, v_a, pl_v, ph_v;
    logic [SHB-1:0] sh_s;
    logic [DB-1:0] dsh_s;
    if (LB > 0) begin : g_split
        logic signed [PL-1:0] pl_r;
        hg_mul #(.AW(LB + 1), .BW(MB), .PW(PL), .PRIM(MUL_PRIM)) u_pl (
            .clk(clk), .en(en), .a({1'b0, x[LB-1:0]}), .b(mm), .p(pl_r)
        );
        assign pl_v = {{(VB - PL){pl_r[PL-1]}}, pl_r};
    end else begin : g_whole
        assign pl_v = '0;
    end
    assign ph_v = {{(VB - PH){ph_r[PH-1]}}, ph_r};
    always_comb begin
        s_x = (ph_v <<< LB) + pl_v;
        s_b = {{(VB - P2){p2_r[P2-1]}}, p2_r} + (HAS_BIAS ? {{(VB - BB){b_p[BB-1]}}, b_p} : '0);
    end
    always_ff @(posedge clk) begin
        if (en) begin
            s_xr <= s_x;
            s_br <= s_b;
            sh_s <= sh_p;
            dsh_s <= dsh_p;
        end
    end

    // stage 4: v = s_x + s_b, and the rounding offset 2^(sh-1) - 1 (half up: 2^(sh-1)) decoded from sh
    logic signed [UB-1:0] rnd, rnd_a;
    always_comb begin
        rnd = '0;
        for (int i = MIN_SHIFT > 1 ? MIN_SHIFT : 1; i <= MAX_SHIFT; i++) begin  // sh lies in MIN_SHIFT .. MAX_SHIFT
            if ({{(32 - SHB){1'b0}}, sh_s} == i)
                rnd = ({{(UB - 1){1'b0}}, 1'b1} <<< (i - 1)) - {{(UB - 1){1'b0}}, !ROUND_UP};
        end
    end
    always_ff @(posedge clk) begin
        if (en) begin
            v_a <= s_xr + s_br;
            sh_a <= sh_s;
            dsh_a <= dsh_s;
            rnd_a <= rnd;
        end
    end

    // stage 5: u = v + rnd + v[sh] (ties to even), kept from bit MIN_SHIFT up
    /* verilator lint_off UNUSEDSIGNAL */
    logic signed [UB-1:0] u;  // bits below MIN_SHIFT only carry into q
    /* verilator lint_on UNUSEDSIGNAL */
    logic signed [QB-1:0] u_q, q;
    logic odd;
    always_comb begin
        odd = 1'b0;
        for (int i = MIN_SHIFT > 1 ? MIN_SHIFT : 1; i <= MAX_SHIFT; i++) begin
            if ({{(32 - SHB){1'b0}}, sh_a} == i) odd = v_a[i < VB ? i : VB - 1];
        end
        u = {{(UB - VB){v_a[VB-1]}}, v_a} + rnd_a + {{(UB - 1){1'b0}}, (!ROUND_UP && odd)};
    end
    always_ff @(posedge clk) begin
        if (en) begin
            u_q <= u[UB-1:MIN_SHIFT];
            dsh_u <= dsh_a;
        end
    end

    // stage 6: q = u >>> sh
    logic signed [QB-1:0] q_r;
    always_comb q = u_q >>> dsh_u;
    always_ff @(posedge clk) if (en) q_r <= q;

    // stage 7: clamp to LO - ZP .. HI - ZP, + ZP (a clamped q gives LZ + ZP = LO or HZ + ZP = HI, mod 2^OB)
    logic signed [KB-1:0] t, lo_k, hi_k;
    logic [OB-1:0] yz;
    always_comb begin
        lo_k = LZX[KB-1:0];
        hi_k = HZX[KB-1:0];
        t = {{(KB - QB){q_r[QB-1]}}, q_r};
        yz = t[OB-1:0] + ZPV[OB-1:0];
        if (t < lo_k) yz = lo_k[OB-1:0] + ZPV[OB-1:0];
        if (t > hi_k) yz = hi_k[OB-1:0] + ZPV[OB-1:0];
    end

    always_ff @(posedge clk) begin
        if (en) y <= yz;
    end
endmodule
