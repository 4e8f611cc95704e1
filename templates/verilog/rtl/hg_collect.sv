// hg_collect: assembles groups of GROUP bits (group nf = channels nf*PE .. nf*PE+PE-1 of a pixel, NF
// groups a pixel) into output beats of BG groups (the low OUTW bits): BG == NF puts the whole pixel in
// one beat; BG < NF (BG divides NF) gives a folded stream of BG*PE channels a beat. The real bits of
// the pixel's last group are its low LASTW bits; lanes above them (beyond the channel count) are
// padding, output as zeros. Beats are held in an output register with valid/ready. Groups arrive in
// order while `en` is high; the caller stalls (en low) while a full beat waits for out_ready.
// REALW (default: all groups but the last whole, the last LASTW bits) generalizes the padding: the
// pixel's real bits, so whole padding groups (a unit's last PE fold over time-shared RQ lanes) are zeros.
module hg_collect #(
    parameter int GROUP = 8, parameter int NF = 1, parameter int NB = 1, parameter int OUTW = 8,
    parameter int BG = NF, parameter int LASTW = GROUP,
    parameter int REALW = (NF - 1) * GROUP + LASTW  // the pixel's real bits: lanes above them are zeros
) (
    input  logic             clk,
    input  logic             rst_n,
    input  logic             en,
    input  logic             in_valid,
    /* verilator lint_off UNUSEDSIGNAL */  // a folded beat without padding lanes counts its own groups
    input  logic [NB-1:0]    nf,
    /* verilator lint_on UNUSEDSIGNAL */
    input  logic [GROUP-1:0] in_data,
    output logic [OUTW-1:0]  out_data,
    output logic             out_valid,
    input  logic             out_ready
);
    localparam int LNF = NF - 1;
    // lanes of the last group beyond the channel count (NF*PE > COUT) are padding: zero, or above OUTW
    /* verilator lint_off UNUSEDSIGNAL */
    logic [BG*GROUP-1:0] beat;
    /* verilator lint_on UNUSEDSIGNAL */

    logic take, last;
    logic [GROUP-1:0] group;
    if (REALW < NF * GROUP) begin : g_mask
        // group FULLG holds the last real lanes (PARTW bits of it); groups after it are all padding
        localparam int FULLG = REALW / GROUP, PARTW = REALW % GROUP;
        localparam logic [GROUP-1:0] PART = PARTW == 0 ? '0 : {GROUP{1'b1}} >> (GROUP - PARTW);
        always_comb begin
            group = in_data;
            if ({{(32 - NB){1'b0}}, nf} > FULLG) group = '0;
            else if ({{(32 - NB){1'b0}}, nf} == FULLG) group = in_data & PART;
        end
    end else begin : g_full
        assign group = in_data;
    end
    assign take = en && in_valid;

    if (BG == NF) begin : g_pixel
        assign last = nf == LNF[NB-1:0];
    end else begin : g_folded
        localparam int GB = $clog2(BG + 1), LBG = BG - 1;
        logic [GB-1:0] g;  // the group within the beat
        always_ff @(posedge clk) begin
            if (!rst_n) g <= '0;
            else if (take) g <= last ? '0 : g + 1'b1;
        end
        assign last = g == LBG[GB-1:0];
    end

    if (BG == 1) begin : g_one
        assign beat = group;
    end else begin : g_many
        logic [(BG-1)*GROUP-1:0] held;  // groups 0 .. BG-2 of the current beat, oldest lowest
        if (BG == 2) begin : g_two
            always_ff @(posedge clk) if (take && !last) held <= group;
        end else begin : g_shift
            always_ff @(posedge clk) if (take && !last) held <= {group, held[(BG-1)*GROUP-1:GROUP]};
        end
        assign beat = {group, held};
    end

    always_ff @(posedge clk) begin
        if (!rst_n) out_valid <= 1'b0;
        else begin
            if (out_valid && out_ready) out_valid <= 1'b0;
            if (take && last) out_valid <= 1'b1;
        end
        if (take && last) out_data <= beat[OUTW-1:0];
    end
endmodule
