// hg_mvu_lane: the requant epilogue of PE lane LANE of hg_mvu: picks the per-channel parameters of
// channel nf*PE + LANE from the parameter vectors, the skip code of that channel (minus its zero
// point), and runs hg_requant (2 stages, advancing with en).
module hg_mvu_lane #(
    parameter int AB = 24, parameter int NF = 1, parameter int PE = 1, parameter int LANE = 0,
    parameter int NB = 1, parameter int COUT = 1, parameter int OB = 8,
    parameter int MB = 16, parameter int SHB = 6, parameter int MAX_SHIFT = 40,
    parameter bit HAS_NEG = 1'b0, parameter bit HAS_SKIP = 1'b0,
    parameter int SKB = 8, parameter bit SKIP_SIGNED = 1'b1, parameter int SMB = 16,
    parameter bit ROUND_UP = 1'b0, parameter int ZP = 0, parameter int LO = -128, parameter int HI = 127,
    parameter logic [NF*PE*MB-1:0] MULT = '0,
    parameter logic [NF*PE*MB-1:0] MULT_NEG = '0,
    parameter logic [NF*PE*SHB-1:0] SHIFT = '0,
    parameter logic [NF*PE*SMB-1:0] SKIP_MULT = '0,
    parameter logic [NF*PE*(SKB+1)-1:0] SKIP_ZP = '0
) (
    input  logic                clk,
    input  logic                en,
    input  logic [NB-1:0]       nf,
    input  logic signed [AB-1:0] acc,
    input  logic [COUT*SKB-1:0] skip_data,
    output logic [OB-1:0]       y
);
    localparam int SXB = SKB + 2;
    wire [NF*PE*MB-1:0] mult_w = MULT;
    wire [NF*PE*MB-1:0] mneg_w = MULT_NEG;
    wire [NF*PE*SHB-1:0] shift_w = SHIFT;
    wire [NF*PE*SMB-1:0] smult_w = SKIP_MULT;
    wire [NF*PE*(SKB+1)-1:0] szp_w = SKIP_ZP;

    int ch;
    logic signed [MB-1:0] m, m_neg;
    logic signed [SMB-1:0] sm;
    logic [SHB-1:0] sh;
    logic signed [SXB-1:0] sx, code, zp;

    always_comb begin
        ch = {{(32 - NB){1'b0}}, nf} * PE + LANE;
        m = mult_w[ch * MB +: MB];
        m_neg = mneg_w[ch * MB +: MB];
        sh = shift_w[ch * SHB +: SHB];
        sm = smult_w[ch * SMB +: SMB];
        zp = {szp_w[ch * (SKB + 1) + SKB], szp_w[ch * (SKB + 1) +: (SKB + 1)]};
        code = '0;
        if (HAS_SKIP && ch < COUT)
            code = {{2{(SKIP_SIGNED ? skip_data[ch * SKB + SKB - 1] : 1'b0)}}, skip_data[ch * SKB +: SKB]};
        sx = code - zp;
    end

    hg_requant #(
        .XB(AB), .MB(MB), .HAS_NEG(HAS_NEG), .HAS_SKIP(HAS_SKIP), .SXB(SXB), .SMB(SMB), .SHB(SHB),
        .MAX_SHIFT(MAX_SHIFT), .ROUND_UP(ROUND_UP), .OB(OB), .ZP(ZP), .LO(LO), .HI(HI)
    ) u_rq (
        .clk(clk), .en(en), .x(acc), .m(m), .m_neg(m_neg), .sx(sx), .sm(sm), .sh(sh), .y(y)
    );
endmodule
