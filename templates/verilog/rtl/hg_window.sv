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
    localparam int KYB = $clog2(KH + 1), KXB = $clog2(KW + 1), WXB = $clog2(IN_W + 1);
    localparam int LKX = KW - 1, LKY = KH - 1, LRP = REPEAT - 1, LOX = OUT_W - 1, LOY = OUT_H - 1;
    localparam int LWX = IN_W - 1;

    logic [WIDTH-1:0] mem [0:DEPTH-1];
    // writer
    logic [WXB-1:0] wx;
    logic [RB-1:0] wrow;
    // reader
    logic [OYB-1:0] oy;
    logic [OXB-1:0] ox;
    logic [RPB-1:0] rep;
    logic [KYB-1:0] ky;
    logic [KXB-1:0] kx;
    logic [RB-1:0] fbase;
    logic signed [AB-1:0] avail;
    // output register
    logic [WIDTH-1:0] rdata;
    logic pad_q, vq;

    // v * k for a constant k >= 0, as shift-adds: Yosys maps every product with a result of 9 bits or
    // more to a DSP48E1, constant factors included (4 DSPs per window of an image 5 pixels wide)
    function int mulc(input int v, input int k);
        mulc = 0;
        for (int b = 0; b < 31; b++) if (((k >> b) & 1) != 0) mulc = mulc + (v <<< b);
    endfunction

    // 32-bit scratch arithmetic: addresses and counters use only their low bits
    /* verilator lint_off UNUSEDSIGNAL */
    int oy_i, ox_i, ky_i, kx_i, iy, ix, need_r, need_c, low_row, avail_i, raddr_i, waddr_i;
    int slot_i, fbase_i, avail_next, fbase_next;
    /* verilator lint_on UNUSEDSIGNAL */
    logic frame_end;
    logic rd_ok, wr_ok, adv, push, pad, end_kx, end_ky, end_rep, end_ox, end_oy;

    always_comb begin
        oy_i = {{(32 - OYB){1'b0}}, oy};
        ox_i = {{(32 - OXB){1'b0}}, ox};
        ky_i = {{(32 - KYB){1'b0}}, ky};
        kx_i = {{(32 - KXB){1'b0}}, kx};
        avail_i = {{(32 - AB){avail[AB-1]}}, avail};
        iy = mulc(oy_i, SH) - PT + mulc(ky_i, DH);
        ix = mulc(ox_i, SW) - PL + mulc(kx_i, DW) + mulc({{(32 - RPB){1'b0}}, rep}, REP_STEP);
        pad = iy < 0 || iy >= IN_H || ix < 0 || ix >= IN_W;
        fbase_i = {{(32 - RB){1'b0}}, fbase};
        slot_i = fbase_i + iy;
        raddr_i = mulc({{(32 - RB){1'b0}}, slot_i[RB-1:0]}, IN_W) + ix;
        waddr_i = mulc({{(32 - RB){1'b0}}, wrow}, IN_W) + {{(32 - WXB){1'b0}}, wx};
        // the window's last input pixel (clamped into the image) and the lowest row still needed
        need_r = mulc(oy_i, SH) - PT + (KH - 1) * DH;
        need_r = need_r < 0 ? 0 : (need_r > IN_H - 1 ? IN_H - 1 : need_r);
        need_c = mulc(ox_i, SW) - PL + (KW - 1) * DW + (REPEAT - 1) * REP_STEP;
        need_c = need_c < 0 ? 0 : (need_c > IN_W - 1 ? IN_W - 1 : need_c);
        low_row = mulc(oy_i, SH) - PT;
        low_row = low_row < 0 ? 0 : (low_row > IN_H ? IN_H : low_row);
        rd_ok = avail_i > mulc(need_r, IN_W) + need_c;
        wr_ok = avail_i < mulc(low_row + ROWS, IN_W);
    end

    always_comb begin  // separate block: these depend on adv/push, which depend on rd_ok/wr_ok
        frame_end = adv && end_kx && end_ky && end_rep && end_ox && end_oy;
        avail_next = avail_i + (push ? 1 : 0) - (frame_end ? FRAME : 0);
        fbase_next = fbase_i + IN_H;
    end

    assign in_ready = wr_ok;
    assign push = in_valid && wr_ok;
    assign adv = rd_ok && (!vq || out_ready);
    assign end_kx = kx == LKX[KXB-1:0];
    assign end_ky = ky == LKY[KYB-1:0];
    assign end_rep = rep == LRP[RPB-1:0];
    assign end_ox = ox == LOX[OXB-1:0];
    assign end_oy = oy == LOY[OYB-1:0];
    assign out_valid = vq;
    assign out_data = pad_q ? PAD : rdata;

    always_ff @(posedge clk) begin
        if (push) mem[waddr_i[AW-1:0]] <= in_data;
        if (adv) begin
            rdata <= mem[raddr_i[AW-1:0]];
            pad_q <= pad;
        end
    end

    always_ff @(posedge clk) begin
        if (!rst_n) begin
            {wx, wrow, oy, ox, rep, ky, kx, fbase} <= '0;
            avail <= '0;
            vq <= 1'b0;
        end else begin
            if (push) begin
                wx <= (wx == LWX[WXB-1:0]) ? '0 : wx + 1'b1;
                if (wx == LWX[WXB-1:0]) wrow <= wrow + 1'b1;
            end
            avail <= avail_next[AB-1:0];
            if (!vq || out_ready) vq <= rd_ok;
            if (adv) begin
                kx <= end_kx ? '0 : kx + 1'b1;
                if (end_kx) begin
                    ky <= end_ky ? '0 : ky + 1'b1;
                    if (end_ky) begin
                        rep <= end_rep ? '0 : rep + 1'b1;
                        if (end_rep) begin
                            ox <= end_ox ? '0 : ox + 1'b1;
                            if (end_ox) begin
                                oy <= end_oy ? '0 : oy + 1'b1;
                                if (end_oy) fbase <= fbase_next[RB-1:0];
                            end
                        end
                    end
                end
            end
        end
    end
endmodule
