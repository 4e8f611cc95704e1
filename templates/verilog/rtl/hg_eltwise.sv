// hg_eltwise: per-pixel elementwise layers, all C channels in parallel, one pixel per cycle.
//   add     (HAS_B = 1): v = (a - a_zp[c]) * a_mult[c] + (b - b_zp[c]) * b_mult[c]
//   requant (HAS_B = 0): v = (a - a_zp[c]) * a_mult[c]   (a_mult_neg[c] where negative, HAS_NEG)
// then y = clamp(ZP + round_shift(v, shift[c]), LO, HI) (hg_requant). Per-tensor parameters are
// given once per channel. Pipeline: 2 requant stages -> output register.
module hg_eltwise #(
    parameter int C = 4,
    parameter int AB = 8, parameter bit A_SIGNED = 1'b1,
    parameter bit HAS_B = 1'b0, parameter int BB = 8, parameter bit B_SIGNED = 1'b1,
    parameter int OB = 8, parameter int MB = 16, parameter int SMB = 16, parameter int SHB = 6,
    parameter int MAX_SHIFT = 40, parameter bit HAS_NEG = 1'b0,
    parameter bit ROUND_UP = 1'b0, parameter int ZP = 0, parameter int LO = -128, parameter int HI = 127,
    parameter logic [C*MB-1:0] A_MULT = '0,
    parameter logic [C*MB-1:0] A_MULT_NEG = '0,
    parameter logic [C*SMB-1:0] B_MULT = '0,
    parameter logic [C*SHB-1:0] SHIFT = '0,
    parameter logic [C*32-1:0] A_ZP = '0,
    parameter logic [C*32-1:0] B_ZP = '0
) (
    input  logic            clk,
    input  logic            rst_n,
    input  logic [C*AB-1:0] a_data,
    input  logic            a_valid,
    output logic            a_ready,
    input  logic [C*BB-1:0] b_data,
    input  logic            b_valid,
    output logic            b_ready,
    output logic [C*OB-1:0] out_data,
    output logic            out_valid,
    input  logic            out_ready
);
    localparam int XA = AB + 2, XBW = BB + 2;
    logic en, fire, v1, v2;
    logic [C*OB-1:0] y2;

    assign en = !out_valid || out_ready;
    assign fire = en && a_valid && (!HAS_B || b_valid);
    assign a_ready = en && (!HAS_B || b_valid);
    assign b_ready = HAS_B && en && a_valid;

    always_ff @(posedge clk) begin
        if (!rst_n) {v1, v2} <= '0;
        else if (en) {v1, v2} <= {fire, v1};
    end

    for (genvar c = 0; c < C; c++) begin : g_lane
        localparam logic [MB-1:0] M = A_MULT[c * MB +: MB];
        localparam logic [MB-1:0] MN = A_MULT_NEG[c * MB +: MB];
        localparam logic [SMB-1:0] SM = B_MULT[c * SMB +: SMB];
        localparam logic [SHB-1:0] S = SHIFT[c * SHB +: SHB];
        localparam logic [XA-1:0] ZA = A_ZP[c * 32 +: XA];
        localparam logic [XBW-1:0] ZB = B_ZP[c * 32 +: XBW];
        logic signed [XA-1:0] xa;
        logic signed [XBW-1:0] xb;
        assign xa = {{2{(A_SIGNED ? a_data[c * AB + AB - 1] : 1'b0)}}, a_data[c * AB +: AB]} - ZA;
        assign xb = HAS_B ? {{2{(B_SIGNED ? b_data[c * BB + BB - 1] : 1'b0)}}, b_data[c * BB +: BB]} - ZB : '0;
        hg_requant #(
            .XB(XA), .MB(MB), .HAS_NEG(HAS_NEG), .HAS_SKIP(HAS_B), .SXB(XBW), .SMB(SMB), .SHB(SHB),
            .MAX_SHIFT(MAX_SHIFT), .ROUND_UP(ROUND_UP), .OB(OB), .ZP(ZP), .LO(LO), .HI(HI)
        ) u_rq (
            .clk(clk), .en(en), .x(xa), .m(M), .m_neg(MN), .sx(xb), .sm(SM), .b(2'sd0), .sh(S), .y(y2[c * OB +: OB])
        );
    end

    hg_collect #(.GROUP(C * OB), .NF(1), .NB(1), .OUTW(C * OB)) u_out (
        .clk(clk), .rst_n(rst_n), .en(en), .in_valid(v2), .nf(1'b0), .in_data(y2),
        .out_data(out_data), .out_valid(out_valid), .out_ready(out_ready)
    );
endmodule
