// hg_mvu_lane: the requant epilogue of PE lane LANE of hg_mvu: picks the per-channel parameters of
// channel nf*PE + LANE, the skip code of that channel (minus its zero point), and runs hg_requant (RQD =
// 6 stages, advancing with en). The lane's parameters are small ROMs indexed by the output fold nf
// (hg_table; no run-time multiplied index into the wide vectors).
// TWO_STEP (the model quantizes t between the layer and its fused ops, docs/numerics.md §8): a first
// hg_requant reproduces that quantizer, t = clamp(MID_ZP + round_shift(acc * M1, S1), MID_LO, MID_HI)
// (RQD stages), then x = t - MID_ZP (MXB bits) goes through the second one with the skip term and the
// bias B2 (POST_BIAS, HAS_PB): 2*RQD stages in all. The channel index and the skip code are
// delayed by the first step's RQD stages (hg_delay) so that step 2 uses those of the same accumulator.
module hg_mvu_lane #(
    parameter MUL_PRIM = "",  // hg_requant's (hg_mul's PRIM)
    parameter int AB = 24, parameter int NF = 1, parameter int PE = 1, parameter int LANE = 0,
    parameter int NB = 1, parameter int COUT = 1, parameter int OB = 8,
    parameter int MB = 16, parameter int SHB = 6, parameter int MAX_SHIFT = 40, parameter int MIN_SHIFT = 0,
    parameter bit HAS_NEG = 1'b0, parameter bit HAS_SKIP = 1'b0,
    parameter int SKB = 8, parameter bit SKIP_SIGNED = 1'b1, parameter int SMB = 16,
    parameter int SKC = COUT, parameter int SKQ = NF,  // channels a skip beat; groups it serves (hg_mvu)
    parameter bit ROUND_UP = 1'b0, parameter int ZP = 0, parameter int LO = -128, parameter int HI = 127,
    parameter logic [NF*PE*MB-1:0] MULT = '0,
    parameter logic [NF*PE*MB-1:0] MULT_NEG = '0,
    parameter logic [NF*PE*SHB-1:0] SHIFT = '0,
    parameter logic [NF*PE*SMB-1:0] SKIP_MULT = '0,
    parameter logic [NF*PE*(SKB+1)-1:0] SKIP_ZP = '0,
    parameter bit TWO_STEP = 1'b0, parameter int MB1 = 2, parameter int SHB1 = 1, parameter int MAX_SHIFT1 = 0,
    parameter int MIN_SHIFT1 = 0,
    parameter bit HAS_NEG1 = 1'b0, parameter int MID_ZP = 0, parameter int MID_LO = 0, parameter int MID_HI = 0,
    parameter int MXB = 2, parameter int TB1 = 3, parameter bit HAS_PB = 1'b0, parameter int PBB = 2,
    parameter logic [NF*PE*MB1-1:0] MULT1 = '0,
    parameter logic [NF*PE*MB1-1:0] MULT1_NEG = '0,
    parameter logic [NF*PE*SHB1-1:0] SHIFT1 = '0,
    parameter logic [NF*PE*PBB-1:0] POST_BIAS = '0
) (
    input  logic                clk,
    input  logic                en,
    input  logic [NB-1:0]       nf,
    input  logic [NB-1:0]       sk_slot,  // the group's slot in the skip beat (nf for a whole pixel)
    input  logic signed [AB-1:0] acc,
    input  logic [SKC*SKB-1:0]  skip_data,
    output logic [OB-1:0]       y
);
    localparam int SXB = SKB + 2;
    localparam int XB2 = TWO_STEP ? MXB : AB;  // operand width of the (last) requant step
    localparam int CH = NF * PE;  // entries of every parameter vector
    localparam int RQD = 7;  // hg_requant's DEPTH

    logic [NB-1:0] nf_d, nf2;
    logic signed [MB-1:0] m, m_neg;
    logic signed [SMB-1:0] sm;
    logic signed [PBB-1:0] pb;
    logic [SHB-1:0] sh;
    logic signed [SXB-1:0] sx0, sx_d, sx, code, zp;
    logic [SKB:0] zp_t;
    logic signed [XB2-1:0] x2;

    // skip code of the channel entering now (stage A of the first requant), minus its zero point
    hg_table #(.N(NF), .W(SKB + 1), .IW(NB), .STRIDE(PE), .FIRST(LANE), .COUNT(CH), .VALUES(SKIP_ZP))
        u_zp (.idx(nf), .value(zp_t));
    assign zp = {zp_t[SKB], zp_t};
    if (HAS_SKIP && SKC < COUT) begin : g_skip_folded
        // a folded skip beat: slot k holds channels k*PE .. k*PE+PE-1 of it (padding beyond COUT: its
        // output is dropped by the collector)
        always_comb begin
            code = '0;
            for (int k = 0; k < SKQ; k++) begin
                if ({{(32 - NB){1'b0}}, sk_slot} == k)
                    code = {{2{(SKIP_SIGNED ? skip_data[(k * PE + LANE) * SKB + SKB - 1] : 1'b0)}},
                            skip_data[(k * PE + LANE) * SKB +: SKB]};
            end
        end
    end else if (HAS_SKIP) begin : g_skip
        wire unused_slot = ^sk_slot;  // a whole pixel: the channel follows nf
        always_comb begin
            code = '0;
            for (int k = 0; k < NF; k++) begin
                if ({{(32 - NB){1'b0}}, nf} == k && k * PE + LANE < COUT)
                    code = {{2{(SKIP_SIGNED ? skip_data[((k * PE + LANE) % COUT) * SKB + SKB - 1] : 1'b0)}},
                            skip_data[((k * PE + LANE) % COUT) * SKB +: SKB]};
            end
        end
    end else begin : g_noskip
        wire unused_skip = ^{skip_data, sk_slot};  // no skip input (lint: the port is read nowhere else)
        assign code = '0;
    end
    assign sx0 = code - zp;

    // TWO_STEP: the channel and its skip code as the first step's output reaches the second
    hg_delay #(.W(NB + SXB), .D(TWO_STEP ? RQD : 0)) u_side (
        .clk(clk), .rst_n(1'b1), .en(en), .d({nf, sx0}), .q({nf_d, sx_d})
    );

    // parameters of the last step, for the channel that reaches it
    assign nf2 = nf_d;
    assign sx = sx_d;
    hg_table #(.N(NF), .W(MB), .IW(NB), .STRIDE(PE), .FIRST(LANE), .COUNT(CH), .VALUES(MULT))
        u_m (.idx(nf2), .value(m));
    hg_table #(.N(NF), .W(MB), .IW(NB), .STRIDE(PE), .FIRST(LANE), .COUNT(CH), .VALUES(MULT_NEG))
        u_m_neg (.idx(nf2), .value(m_neg));
    hg_table #(.N(NF), .W(SHB), .IW(NB), .STRIDE(PE), .FIRST(LANE), .COUNT(CH), .VALUES(SHIFT))
        u_sh (.idx(nf2), .value(sh));
    hg_table #(.N(NF), .W(SMB), .IW(NB), .STRIDE(PE), .FIRST(LANE), .COUNT(CH), .VALUES(SKIP_MULT))
        u_sm (.idx(nf2), .value(sm));
    hg_table #(.N(NF), .W(PBB), .IW(NB), .STRIDE(PE), .FIRST(LANE), .COUNT(CH), .VALUES(POST_BIAS))
        u_pb (.idx(nf2), .value(pb));

    if (TWO_STEP) begin : g_two_step
        logic signed [MB1-1:0] m1, m1n;
        logic [SHB1-1:0] s1;
        logic [TB1-1:0] t;
        localparam logic signed [TB1:0] ZP1 = MID_ZP[TB1:0];  // |MID_ZP| fits TB1 + 1 bits
        logic signed [TB1:0] xt;
        hg_table #(.N(NF), .W(MB1), .IW(NB), .STRIDE(PE), .FIRST(LANE), .COUNT(CH), .VALUES(MULT1))
            u_m1 (.idx(nf), .value(m1));
        hg_table #(.N(NF), .W(MB1), .IW(NB), .STRIDE(PE), .FIRST(LANE), .COUNT(CH), .VALUES(MULT1_NEG))
            u_m1n (.idx(nf), .value(m1n));
        hg_table #(.N(NF), .W(SHB1), .IW(NB), .STRIDE(PE), .FIRST(LANE), .COUNT(CH), .VALUES(SHIFT1))
            u_s1 (.idx(nf), .value(s1));
        hg_requant #(
            .XB(AB), .MB(MB1), .HAS_NEG(HAS_NEG1), .HAS_SKIP(1'b0), .SXB(2), .SMB(2), .HAS_BIAS(1'b0), .BB(2),
            .SHB(SHB1), .MAX_SHIFT(MAX_SHIFT1), .MIN_SHIFT(MIN_SHIFT1), .ROUND_UP(ROUND_UP), .OB(TB1), .ZP(MID_ZP), .LO(MID_LO),
            .HI(MID_HI), .MUL_PRIM(MUL_PRIM)
        ) u_mid (
            .clk(clk), .en(en), .x(acc), .m(m1), .m_neg(m1n), .sx(2'sd0), .sm(2'sd0), .b(2'sd0), .sh(s1), .y(t)
        );
        always_comb begin
            xt = $signed({t[TB1-1], t}) - ZP1;  // t - MID_ZP fits MXB bits
            x2 = xt[XB2-1:0];
        end
    end else begin : g_one_step
        always_comb x2 = acc[XB2-1:0];
    end

    hg_requant #(
        .XB(XB2), .MB(MB), .HAS_NEG(HAS_NEG), .HAS_SKIP(HAS_SKIP), .SXB(SXB), .SMB(SMB), .HAS_BIAS(HAS_PB),
        .BB(PBB), .SHB(SHB), .MAX_SHIFT(MAX_SHIFT), .MIN_SHIFT(MIN_SHIFT), .ROUND_UP(ROUND_UP), .OB(OB), .ZP(ZP), .LO(LO), .HI(HI),
        .MUL_PRIM(MUL_PRIM)
    ) u_rq (
        .clk(clk), .en(en), .x(x2), .m(m), .m_neg(m_neg), .sx(sx), .sm(sm), .b(pb), .sh(sh), .y(y)
    );
endmodule
