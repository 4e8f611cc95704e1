// hg_window: line buffer and sliding-window generator for one stream of pixels (raster order, one
// pixel of WIDTH bits per beat). For every output pixel (oy, ox) it emits REPEAT times the KH x KW
// window taps (ky, kx) in raster order, one tap (a whole input pixel) per beat; taps outside the
// image are the constant PAD (the input zero point, or the lowest code for max pooling). REP_STEP
// shifts the r-th repeat r columns right: over a folded stream (an image F beats a pixel wide, the
// window dilated F times) REPEAT = F, REP_STEP = 1 emits the window one fold at a time.
// Geometry follows ONNX: input row of tap = oy*SH - PT + ky*DH (columns alike), floor output size.
//
// The buffer holds ROWS = 2^ceil(log2(DH*(KH-1)+1+SH)) image rows; frame rows map to buffer rows by a
// global row counter, so the next frame streams in while the last rows of this one are still read.
// `avail` counts input pixels written since the start of the frame being read (the writer may be up
// to ROWS rows ahead, into the next frame). A tap is read once every input pixel of its window is in
// (avail > index of the window's last pixel); a pixel is written once the buffer row it replaces is
// no longer needed (avail < (lowest needed row + ROWS) * IN_W). One tap per cycle, no bubbles.
// Timing: the tap counters run GD = 4 stages ahead of the read, a generator pipeline that advances
// with the read: G1 the row and column of the tap, G2 padding, buffer row and the clamped bounds, G3
// the buffer address, the index of the window's last pixel and the write limit, G4 the tap being
// read. The reset loads G1..G4 with taps 3, 2, 1, 0 and the counters with tap 4 (constant functions of
// the geometry), so the pipeline is full from the first cycle after reset and the first tap issues
// when it did without it. No multiply-add chain sits between the counters and the buffer; the write
// address is a counter of its own. The read and write conditions are registers (`rd_ok`, `wr_ok`):
// each cycle computes them for the next one from every candidate of the next `avail` (+ push,
// - FRAME after the frame's last tap) against the tap read next (G4 if no tap is read, else G3), the
// compares side by side and a selection by the read and the push, so neither the compare chain nor
// the read's fan-out to the generator's enables sits in the loop through `avail` (on ECP5 the two in
// one cycle were the critical path of every convolution, 6.8 to 9.8 ns). The conditions are the same
// in every cycle as the compares of `avail` they replace: cycles and outputs do not change.
// The read takes two stages, R (the buffer's read: `rdata`) and O (`rdata_q`, the output register), a
// pipeline that fills its bubbles: a block-RAM buffer's DO feeds only the O register, which `hlsgen pnr`
// moves into the DP16KD as its output register (hlsgen/tools/bram_outreg.py), so the block's slow
// clock-to-output is not in the path to the consumer.
module hg_window #(
    parameter int WIDTH = 8,
    parameter int IN_H = 4, parameter int IN_W = 4,
    parameter int KH = 3, parameter int KW = 3,
    parameter int SH = 1, parameter int SW = 1,
    parameter int DH = 1, parameter int DW = 1,
    parameter int PT = 1, parameter int PL = 1,
    parameter int OUT_H = 4, parameter int OUT_W = 4,
    parameter int REPEAT = 1,
    parameter int REP_STEP = 0,  // columns each repeat shifts the window by (1: fold-major, one fold a repeat)
    parameter logic [WIDTH-1:0] PAD = '0
) (
    input  logic             clk,
    input  logic             rst_n,
    input  logic [WIDTH-1:0] in_data,
    input  logic             in_valid,
    output logic             in_ready,
    output logic [WIDTH-1:0] out_data,
    output logic             out_valid,
    input  logic             out_ready
);
    localparam int ROWS = 1 << $clog2(DH * (KH - 1) + 1 + SH);
    localparam int RB = $clog2(ROWS);
    localparam int DEPTH = ROWS * IN_W;
    localparam int AW = $clog2(DEPTH);
    localparam int AB = $clog2((IN_H + ROWS) * IN_W + 1) + 2;  // signed pixel count
    localparam int FRAME = IN_H * IN_W;
    localparam int OYB = $clog2(OUT_H + 1), OXB = $clog2(OUT_W + 1), RPB = $clog2(REPEAT + 1);
    localparam int KYB = $clog2(KH + 1), KXB = $clog2(KW + 1);
    localparam int LKX = KW - 1, LKY = KH - 1, LRP = REPEAT - 1, LOX = OUT_W - 1, LOY = OUT_H - 1;
    localparam int LDEPTH = DEPTH - 1;

    // The buffer's write lags the push by a cycle (push_d, waddr_d, wdata_d), so its write port is
    // driven by registers, not by the upstream valid. A tap can then be read in the cycle its own pixel
    // is being written (a window that waits for its last pixel and reads it first: a dense layer's
    // one-pixel window); that read takes wdata_d, forwarded beside the read and selected after stage
    // O. No other read meets a write of its address: a pixel replaces a buffer row only once no tap
    // read from then on needs it (wr_ok), and a padded tap's data is not used. So nothing depends on
    // how the memory resolves a read and a write of one address in one cycle (no_rw_check): Yosys adds
    // no collision logic of its own, whose multiplexer after the block RAM's read data would keep its
    // output register in the fabric.
    (* no_rw_check *) logic [WIDTH-1:0] mem [0:DEPTH-1];
    logic push_d, fwd_r, fwd_q;
    logic [AW-1:0] waddr_d;
    logic [WIDTH-1:0] wdata_d, wfwd_r, wfwd_q;
    // signed coordinate width: any tap row / column and bound below fits, with the sign
    localparam int CB = $clog2(OUT_H * SH + OUT_W * SW + KH * DH + KW * DW + REPEAT * REP_STEP + IN_H + IN_W
                               + PT + PL + ROWS + 2) + 2;
    // writer
    logic [AW-1:0] waddr;  // row wrow of the buffer, column wx: wrow*IN_W + wx, counting through DEPTH
    // reader: stage G0, the tap counters
    logic [OYB-1:0] oy;
    logic [OXB-1:0] ox;
    logic [RPB-1:0] rep;
    logic [KYB-1:0] ky;
    logic [KXB-1:0] kx;
    logic [RB-1:0] fbase;
    logic signed [AB-1:0] avail;
    // output register
    logic [WIDTH-1:0] rdata, rdata_q;
    logic pad_r, pad_q, vr, vq, mv;

    // v * k for a constant k >= 0, as shift-adds: Yosys maps every product with a result of 9 bits or
    // more to a DSP48E1, constant factors included (4 DSPs per window of an image 5 pixels wide)
    function int mulc(input int v, input int k);
        mulc = 0;
        for (int b = 0; b < 31; b++) if (((k >> b) & 1) != 0) mulc = mulc + (v <<< b);
    endfunction

    // the generator's reset: tap k of the frame sequence (frames of TPF taps), its counters and the
    // values the stages hold for it (the same arithmetic as below, on constants)
    localparam int TPF = KW * KH * REPEAT * OUT_W * OUT_H;
    function int t_kx(input int k); t_kx = k % KW; endfunction
    function int t_ky(input int k); t_ky = (k / KW) % KH; endfunction
    function int t_rep(input int k); t_rep = (k / (KW * KH)) % REPEAT; endfunction
    function int t_ox(input int k); t_ox = (k / (KW * KH * REPEAT)) % OUT_W; endfunction
    function int t_oy(input int k); t_oy = (k / (KW * KH * REPEAT * OUT_W)) % OUT_H; endfunction
    function int t_fb(input int k); t_fb = ((k / TPF) * IN_H) & (ROWS - 1); endfunction
    function int t_last(input int k); t_last = (k % TPF) == TPF - 1 ? 1 : 0; endfunction
    function int t_iy(input int k); t_iy = t_oy(k) * SH - PT + t_ky(k) * DH; endfunction
    function int t_ix(input int k); t_ix = t_ox(k) * SW - PL + t_kx(k) * DW + t_rep(k) * REP_STEP; endfunction
    function int clampi(input int v, input int hi);
        clampi = v < 0 ? 0 : (v > hi ? hi : v);
    endfunction
    function int t_nr(input int k); t_nr = t_oy(k) * SH - PT + (KH - 1) * DH; endfunction
    function int t_nc(input int k);
        t_nc = t_ox(k) * SW - PL + (KW - 1) * DW + (REPEAT - 1) * REP_STEP;
    endfunction
    function int t_lr(input int k); t_lr = t_oy(k) * SH - PT; endfunction
    function int t_pad(input int k);
        t_pad = (t_iy(k) < 0 || t_iy(k) >= IN_H || t_ix(k) < 0 || t_ix(k) >= IN_W) ? 1 : 0;
    endfunction
    function int t_slot(input int k); t_slot = (t_fb(k) + t_iy(k)) & (ROWS - 1); endfunction
    function int t_need(input int k); t_need = clampi(t_nr(k), IN_H - 1) * IN_W + clampi(t_nc(k), IN_W - 1); endfunction
    function int t_wlim(input int k); t_wlim = (clampi(t_lr(k), IN_H) + ROWS) * IN_W; endfunction
    localparam int KX_R = t_kx(4), KY_R = t_ky(4), RP_R = t_rep(4), OX_R = t_ox(4), OY_R = t_oy(4), FB_R = t_fb(4);
    localparam int IY1_R = t_iy(3), IX1_R = t_ix(3), NR1_R = t_nr(3), NC1_R = t_nc(3), LR1_R = t_lr(3);
    localparam int FB1_R = t_fb(3), L1_R = t_last(3);
    localparam int PAD2_R = t_pad(2), SLOT2_R = t_slot(2), IX2_R = t_ix(2), NR2_R = clampi(t_nr(2), IN_H - 1);
    localparam int NC2_R = clampi(t_nc(2), IN_W - 1), LR2_R = clampi(t_lr(2), IN_H), L2_R = t_last(2);
    localparam int RADDR3_R = t_slot(1) * IN_W + t_ix(1), PAD3_R = t_pad(1), L3_R = t_last(1);
    localparam int NEED3_R = t_need(1), NEED3F_R = t_need(1) + FRAME;
    localparam int WLIM3M_R = t_wlim(1) - 1, WLIM3MF_R = t_wlim(1) - 1 + FRAME;
    localparam int RADDR4_R = t_slot(0) * IN_W + t_ix(0), PAD4_R = t_pad(0), L4_R = t_last(0);
    localparam int NEED4_R = t_need(0), WLIM4M_R = t_wlim(0) - 1;
    // the conditions after reset (avail = 0)
    localparam bit RD_OK_R = 0 > NEED4_R, WR_OK_R = 0 <= WLIM4M_R;

    // 32-bit scratch arithmetic: addresses and counters use only their low bits
    /* verilator lint_off UNUSEDSIGNAL */
    int oy_i, ox_i, ky_i, kx_i, iy, ix, need_r, need_c, low_row, nr_c, nc_c, lr_c, slot_i;
    int raddr_i, need_i, wlim_i, need_f, wlim_m, wlim_mf, iy_c, ix_c;
    /* verilator lint_on UNUSEDSIGNAL */
    logic g0_last, pad_c;
    logic rd_ok, wr_ok, adv, push, eng, end_kx, end_ky, end_rep, end_ox, end_oy;
    // the generator stages' registers
    logic signed [CB-1:0] iy1, ix1, nr1, nc1, lr1;
    logic [RB-1:0] fb1;
    logic last1, last2, last3, pad2, pad3;
    logic [RB-1:0] slot2;
    logic signed [CB-1:0] ix2, nr2, nc2, lr2;
    logic [AW-1:0] raddr3, raddr4;
    logic signed [AB-1:0] need3, need3f, wlim3m, wlim3mf, need4, wlim4m;  // ..f: + FRAME; wlim..m: - 1
    logic last4, pad4;

    always_comb begin
        // G0 -> G1: the tap's row and column, the window's last row / column and its first row
        oy_i = {{(32 - OYB){1'b0}}, oy};
        ox_i = {{(32 - OXB){1'b0}}, ox};
        ky_i = {{(32 - KYB){1'b0}}, ky};
        kx_i = {{(32 - KXB){1'b0}}, kx};
        iy = mulc(oy_i, SH) - PT + mulc(ky_i, DH);
        ix = mulc(ox_i, SW) - PL + mulc(kx_i, DW) + mulc({{(32 - RPB){1'b0}}, rep}, REP_STEP);
        need_r = mulc(oy_i, SH) - PT + (KH - 1) * DH;
        need_c = mulc(ox_i, SW) - PL + (KW - 1) * DW + (REPEAT - 1) * REP_STEP;
        low_row = mulc(oy_i, SH) - PT;
        // G1 -> G2: padding, the buffer row, the bounds clamped into the image
        nr_c = {{(32 - CB){nr1[CB-1]}}, nr1};
        nr_c = nr_c < 0 ? 0 : (nr_c > IN_H - 1 ? IN_H - 1 : nr_c);
        nc_c = {{(32 - CB){nc1[CB-1]}}, nc1};
        nc_c = nc_c < 0 ? 0 : (nc_c > IN_W - 1 ? IN_W - 1 : nc_c);
        lr_c = {{(32 - CB){lr1[CB-1]}}, lr1};
        lr_c = lr_c < 0 ? 0 : (lr_c > IN_H ? IN_H : lr_c);
        iy_c = {{(32 - CB){iy1[CB-1]}}, iy1};
        ix_c = {{(32 - CB){ix1[CB-1]}}, ix1};
        pad_c = iy_c < 0 || iy_c >= IN_H || ix_c < 0 || ix_c >= IN_W;
        slot_i = {{(32 - RB){1'b0}}, fb1} + iy_c;
        // G2 -> G3: the buffer address, the window's last input pixel, the write limit
        raddr_i = mulc({{(32 - RB){1'b0}}, slot2}, IN_W) + {{(32 - CB){ix2[CB-1]}}, ix2};
        need_i = mulc({{(32 - CB){nr2[CB-1]}}, nr2}, IN_W) + {{(32 - CB){nc2[CB-1]}}, nc2};
        wlim_i = mulc({{(32 - CB){lr2[CB-1]}}, lr2} + ROWS, IN_W);
        need_f = need_i + FRAME;
        wlim_m = wlim_i - 1;
        wlim_mf = wlim_i + (FRAME - 1);
    end

    // the read: a tap is read once every input pixel of its window is in (avail > need); a pixel is
    // written once the buffer row it replaces is no longer needed by the tap being read (avail < wlim).
    // rd_ok and wr_ok are those compares, registered: see rd_next / wr_next below
    assign in_ready = wr_ok;
    assign push = in_valid && wr_ok;
    assign mv = !vq || out_ready;    // stage O takes stage R's tap
    assign adv = rd_ok && (!vr || mv);  // a tap is read into stage R
    assign eng = adv;  // the generator moves with the read
    assign end_kx = kx == LKX[KXB-1:0];
    assign end_ky = ky == LKY[KYB-1:0];
    assign end_rep = rep == LRP[RPB-1:0];
    assign end_ox = ox == LOX[OXB-1:0];
    assign end_oy = oy == LOY[OYB-1:0];
    assign g0_last = end_kx && end_ky && end_rep && end_ox && end_oy;
    assign out_valid = vq;
    assign out_data = pad_q ? PAD : (fwd_q ? wfwd_q : rdata_q);

    // avail + push - (the frame's last tap read ? FRAME : 0), the sums beside the selection
    logic signed [AB-1:0] av_p1, av_mf, av_p1mf;
    always_comb begin
        av_p1 = avail + 1'b1;
        av_mf = avail - FRAME[AB-1:0];
        av_p1mf = avail - (FRAME[AB-1:0] - 1'b1);
    end

    // the next cycle's conditions: the next avail is avail (+ 1 on a push) (- FRAME after the frame's
    // last tap), compared with the tap read next: G4's if none is read now, else G3's. With a + 1 or a
    // - FRAME moved to the other side (need3f, wlim3mf; avail + 1 > n is avail >= n, avail + 1 < w
    // is avail < w - 1), every candidate is one compare of avail with a register, all side by side
    // (a selection in front of one compare made the path 8.5 ns); the read and the push pick one.
    logic rd_next, wr_next;
    logic [5:0] rd_c, wr_c;  // {G3 after the frame's last tap, G3, G4} x {push, no push}
    always_comb begin
        rd_c = {avail >= need3f, avail > need3f, avail >= need3, avail > need3, avail >= need4, avail > need4};
        wr_c = {avail < wlim3mf, avail <= wlim3mf, avail < wlim3m, avail <= wlim3m, avail < wlim4m, avail <= wlim4m};
        rd_next = rd_c[{!adv ? 2'd0 : (last4 ? 2'd2 : 2'd1), push}];
        wr_next = wr_c[{!adv ? 2'd0 : (last4 ? 2'd2 : 2'd1), push}];
    end

    always_ff @(posedge clk) begin
        if (push) begin
            waddr_d <= waddr;
            wdata_d <= in_data;
        end
        if (push_d) mem[waddr_d] <= wdata_d;
        if (adv) begin
            rdata <= mem[raddr4];
            pad_r <= pad4;
            fwd_r <= push_d && waddr_d == raddr4;
            wfwd_r <= wdata_d;
        end
        if (mv) begin
            rdata_q <= rdata;
            pad_q <= pad_r;
            fwd_q <= fwd_r;
            wfwd_q <= wfwd_r;
        end
        if (!rst_n) begin
            iy1 <= IY1_R[CB-1:0];
            ix1 <= IX1_R[CB-1:0];
            nr1 <= NR1_R[CB-1:0];
            nc1 <= NC1_R[CB-1:0];
            lr1 <= LR1_R[CB-1:0];
            fb1 <= FB1_R[RB-1:0];
            last1 <= L1_R[0];
            pad2 <= PAD2_R[0];
            slot2 <= SLOT2_R[RB-1:0];
            ix2 <= IX2_R[CB-1:0];
            nr2 <= NR2_R[CB-1:0];
            nc2 <= NC2_R[CB-1:0];
            lr2 <= LR2_R[CB-1:0];
            last2 <= L2_R[0];
            raddr3 <= RADDR3_R[AW-1:0];
            need3 <= NEED3_R[AB-1:0];
            need3f <= NEED3F_R[AB-1:0];
            wlim3m <= WLIM3M_R[AB-1:0];
            wlim3mf <= WLIM3MF_R[AB-1:0];
            pad3 <= PAD3_R[0];
            last3 <= L3_R[0];
            raddr4 <= RADDR4_R[AW-1:0];
            need4 <= NEED4_R[AB-1:0];
            wlim4m <= WLIM4M_R[AB-1:0];
            pad4 <= PAD4_R[0];
            last4 <= L4_R[0];
        end else if (eng) begin
            iy1 <= iy[CB-1:0];
            ix1 <= ix[CB-1:0];
            nr1 <= need_r[CB-1:0];
            nc1 <= need_c[CB-1:0];
            lr1 <= low_row[CB-1:0];
            fb1 <= fbase;
            last1 <= g0_last;
            pad2 <= pad_c;
            slot2 <= slot_i[RB-1:0];
            ix2 <= ix1;
            nr2 <= nr_c[CB-1:0];
            nc2 <= nc_c[CB-1:0];
            lr2 <= lr_c[CB-1:0];
            last2 <= last1;
            raddr3 <= raddr_i[AW-1:0];
            need3 <= need_i[AB-1:0];
            need3f <= need_f[AB-1:0];
            wlim3m <= wlim_m[AB-1:0];
            wlim3mf <= wlim_mf[AB-1:0];
            pad3 <= pad2;
            last3 <= last2;
            raddr4 <= raddr3;
            need4 <= need3;
            wlim4m <= wlim3m;
            pad4 <= pad3;
            last4 <= last3;
        end
    end

    always_ff @(posedge clk) begin
        if (!rst_n) begin
            oy <= OY_R[OYB-1:0];
            ox <= OX_R[OXB-1:0];
            rep <= RP_R[RPB-1:0];
            ky <= KY_R[KYB-1:0];
            kx <= KX_R[KXB-1:0];
            fbase <= FB_R[RB-1:0];
            waddr <= '0;
            avail <= '0;
            push_d <= 1'b0;
            vr <= 1'b0;
            vq <= 1'b0;
            rd_ok <= RD_OK_R;
            wr_ok <= WR_OK_R;
        end else begin
            push_d <= push;
            if (push) waddr <= waddr == LDEPTH[AW-1:0] ? '0 : waddr + 1'b1;
            rd_ok <= rd_next;
            wr_ok <= wr_next;
            if (adv && last4) avail <= push ? av_p1mf : av_mf;
            else if (push) avail <= av_p1;
            if (!vr || mv) vr <= rd_ok;
            if (mv) vq <= vr;
            if (eng) begin
                kx <= end_kx ? '0 : kx + 1'b1;
                if (end_kx) begin
                    ky <= end_ky ? '0 : ky + 1'b1;
                    if (end_ky) begin
                        rep <= end_rep ? '0 : rep + 1'b1;
                        if (end_rep) begin
                            ox <= end_ox ? '0 : ox + 1'b1;
                            if (end_ox) begin
                                oy <= end_oy ? '0 : oy + 1'b1;
                                if (end_oy) fbase <= fbase + IN_H[RB-1:0];
                            end
                        end
                    end
                end
            end
        end
    end
endmodule
