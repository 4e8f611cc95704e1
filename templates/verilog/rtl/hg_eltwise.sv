// hg_eltwise: per-pixel elementwise layers, PE requant lanes time-shared over the C channels: a pixel
// takes NF = ceil(C/PE) cycles, lane p of fold nf handles channel nf*PE + p (lanes beyond C are padding).
//   add     (HAS_B = 1): v = (a - a_zp[c]) * a_mult[c] + (b - b_zp[c]) * b_mult[c]
//   requant (HAS_B = 0): v = (a - a_zp[c]) * a_mult[c]   (a_mult_neg[c] where negative, HAS_NEG)
// then y = clamp(ZP + round_shift(v, shift[c]), LO, HI) (hg_requant). Per-tensor parameters are
// given once per channel; a lane reads its channel's parameters from a small ROM indexed by the fold.
// The input beat is taken in its last fold. Folded streams (FI, FO < C channels a beat, multiples of
// PE dividing NF*PE): an input beat serves FI/PE folds, an output beat collects FO/PE.
// Pipeline: RQD = 7 requant stages (hg_requant's DEPTH) -> output collector.
module hg_eltwise #(
    parameter int C = 4, parameter int PE = 4,
    parameter int AB = 8, parameter bit A_SIGNED = 1'b1,
    parameter bit HAS_B = 1'b0, parameter int BB = 8, parameter bit B_SIGNED = 1'b1,
    parameter int OB = 8, parameter int MB = 16, parameter int SMB = 16, parameter int SHB = 6,
    parameter int MAX_SHIFT = 40, parameter int MIN_SHIFT = 0, parameter bit HAS_NEG = 1'b0,
    parameter bit ROUND_UP = 1'b0, parameter int ZP = 0, parameter int LO = -128, parameter int HI = 127,
    parameter logic [C*MB-1:0] A_MULT = '0,
    parameter logic [C*MB-1:0] A_MULT_NEG = '0,
    parameter logic [C*SMB-1:0] B_MULT = '0,
    parameter logic [C*SHB-1:0] SHIFT = '0,
    parameter logic [C*32-1:0] A_ZP = '0,
    parameter logic [C*32-1:0] B_ZP = '0,
    // channels a beat: FI of each input, FO of the output (C: whole pixels; else a multiple of PE)
    parameter int FI = C, parameter int FO = C
) (
    input  logic            clk,
    input  logic            rst_n,
    input  logic [FI*AB-1:0] a_data,
    input  logic            a_valid,
    output logic            a_ready,
    input  logic [FI*BB-1:0] b_data,
    input  logic            b_valid,
    output logic            b_ready,
    output logic [FO*OB-1:0] out_data,
    output logic            out_valid,
    input  logic            out_ready
);
    localparam int XA = AB + 2, XBW = BB + 2;
    localparam int NF = (C + PE - 1) / PE, NB = $clog2(NF + 1), LNF = NF - 1;
    localparam int RQD = 7;  // hg_requant's DEPTH
    logic en, fire, last, v_y;
    logic [NB-1:0] nf, nf_y;
    logic [PE*OB-1:0] y2;

    assign en = !out_valid || out_ready;
    assign last = nf == LNF[NB-1:0];
    assign fire = en && a_valid && (!HAS_B || b_valid);
    // an input beat is taken in its last fold: the pixel's last, or every FI/PE folds of a folded stream
    logic beat_done;
    always_comb begin
        beat_done = last;
        if (FI < C)
            for (int k = 0; k < NF; k++)
                if ({{(32 - NB){1'b0}}, nf} == k && k % (FI / PE) == FI / PE - 1) beat_done = 1'b1;
    end
    assign a_ready = en && (!HAS_B || b_valid) && beat_done;
    assign b_ready = HAS_B && en && a_valid && beat_done;

    always_ff @(posedge clk) begin
        if (!rst_n) nf <= '0;
        else if (en && fire) nf <= last ? '0 : nf + 1'b1;
    end
    // the valid bit and fold beside the lanes' data
    hg_delay #(.W(1 + NB), .D(RQD), .RESET(1'b1)) u_v (
        .clk(clk), .rst_n(rst_n), .en(en), .d({fire, nf}), .q({v_y, nf_y})
    );

    for (genvar p = 0; p < PE; p++) begin : g_lane
        logic signed [MB-1:0] m, mn;
        logic signed [SMB-1:0] sm;
        logic [SHB-1:0] sh;
        /* verilator lint_off UNUSEDSIGNAL */
        logic [31:0] za, zb;  // XA and XBW bits of them are used
        /* verilator lint_on UNUSEDSIGNAL */
        logic [XA-1:0] ca;
        logic [XBW-1:0] cb;
        logic signed [XA-1:0] xa;
        logic signed [XBW-1:0] xb;
        hg_table #(.N(NF), .W(MB), .IW(NB), .STRIDE(PE), .FIRST(p), .COUNT(C), .VALUES(A_MULT))
            u_m (.idx(nf), .value(m));
        hg_table #(.N(NF), .W(MB), .IW(NB), .STRIDE(PE), .FIRST(p), .COUNT(C), .VALUES(A_MULT_NEG))
            u_mn (.idx(nf), .value(mn));
        hg_table #(.N(NF), .W(SMB), .IW(NB), .STRIDE(PE), .FIRST(p), .COUNT(C), .VALUES(B_MULT))
            u_sm (.idx(nf), .value(sm));
        hg_table #(.N(NF), .W(SHB), .IW(NB), .STRIDE(PE), .FIRST(p), .COUNT(C), .VALUES(SHIFT))
            u_sh (.idx(nf), .value(sh));
        hg_table #(.N(NF), .W(32), .IW(NB), .STRIDE(PE), .FIRST(p), .COUNT(C), .VALUES(A_ZP))
            u_za (.idx(nf), .value(za));
        hg_table #(.N(NF), .W(32), .IW(NB), .STRIDE(PE), .FIRST(p), .COUNT(C), .VALUES(B_ZP))
            u_zb (.idx(nf), .value(zb));
        always_comb begin
            {ca, cb} = '0;
            for (int k = 0; k < NF; k++) begin
                if ({{(32 - NB){1'b0}}, nf} == k && k * PE + p < C) begin
                    ca = {{2{(A_SIGNED ? a_data[((k * PE + p) % FI) * AB + AB - 1] : 1'b0)}},
                          a_data[((k * PE + p) % FI) * AB +: AB]};
                    if (HAS_B)
                        cb = {{2{(B_SIGNED ? b_data[((k * PE + p) % FI) * BB + BB - 1] : 1'b0)}},
                              b_data[((k * PE + p) % FI) * BB +: BB]};
                end
            end
            xa = ca - za[XA-1:0];
            xb = HAS_B ? cb - zb[XBW-1:0] : '0;
        end
        hg_requant #(
            .XB(XA), .MB(MB), .HAS_NEG(HAS_NEG), .HAS_SKIP(HAS_B), .SXB(XBW), .SMB(SMB), .SHB(SHB),
            .MAX_SHIFT(MAX_SHIFT), .MIN_SHIFT(MIN_SHIFT), .ROUND_UP(ROUND_UP), .OB(OB), .ZP(ZP), .LO(LO), .HI(HI)
        ) u_rq (
            .clk(clk), .en(en), .x(xa), .m(m), .m_neg(mn), .sx(xb), .sm(sm), .b(2'sd0), .sh(sh), .y(y2[p * OB +: OB])
        );
    end

    localparam int LASTW = FO < C ? (C - (NF - 1) * PE) * OB : PE * OB;  // folded: zeros beyond C
    hg_collect #(.GROUP(PE * OB), .NF(NF), .NB(NB), .OUTW(FO * OB), .BG(FO < C ? FO / PE : NF),
                 .LASTW(LASTW)) u_out (
        .clk(clk), .rst_n(rst_n), .en(en), .in_valid(v_y), .nf(nf_y), .in_data(y2),
        .out_data(out_data), .out_valid(out_valid), .out_ready(out_ready)
    );
endmodule
