// hg_reorder: a frame buffer between a mid-network Transpose/Reshape and a layer that reads pixels
// in raster order with channels innermost, in two banks (ping-pong): IN_P beats of IN_C codes are
// written into one bank in arrival order (one beat per cycle) while the other bank's frame is read:
// ELEMENTS codes, one per cycle; element k is arrival element (word PERM_WORD[k], lane PERM_LANE[k]),
// read from MEM_FILE ($readmemh: one word per element, lane in the low LB bits, word above). Every
// OUT_C codes form an output beat. A bank is written once it has been read, so a frame takes
// max(IN_P, ELEMENTS) cycles in steady state (the cycle model), IN_P + ELEMENTS the first.
// Folded streams (pixels wider than a beat): IN_P counts input beats of IN_C lanes (a pixel's beats
// consecutive, as they arrive), and a pixel's OUT_PC codes leave as beats of OUT_C, the last one
// zero above its codes.
module hg_reorder #(
    parameter int IN_P = 16, parameter int IN_C = 4, parameter int OUT_C = 4, parameter int B = 8,
    parameter int ELEMENTS = 64, parameter int WB = 4, parameter int LB = 2, parameter int KB = 6,
    parameter int CB = 2, parameter int OUT_PC = OUT_C, parameter int PB = CB,
    parameter MEM_FILE = ""
) (
    input  logic              clk,
    input  logic              rst_n,
    input  logic [IN_C*B-1:0] in_data,
    input  logic              in_valid,
    output logic              in_ready,
    output logic [OUT_C*B-1:0] out_data,
    output logic              out_valid,
    input  logic              out_ready
);
    localparam int LAST_W = IN_P - 1, LAST_K = ELEMENTS - 1, LAST_C = OUT_C - 1, LAST_PC = OUT_PC - 1;
    logic [IN_C*B-1:0] bank0 [0:IN_P-1];
    logic [IN_C*B-1:0] bank1 [0:IN_P-1];
    logic [WB+LB-1:0] perm [0:ELEMENTS-1];
    initial if (MEM_FILE != "") $readmemh(MEM_FILE, perm);

    logic [1:0] full;  // full[b]: bank b holds a whole frame not yet read
    logic wbank, rbank;  // the bank being written, the bank read next
    logic reading, write, last_in, last_out;
    logic [WB-1:0] wp;
    logic [KB-1:0] k;
    logic [CB-1:0] c;
    logic [PB-1:0] oc;  // the code within its output pixel
    logic emit;  // this code ends a beat: its last lane, or its pixel's last code
    logic [OUT_C*B-1:0] acc, beat;
    logic [WB+LB-1:0] where;
    logic [IN_C*B-1:0] word;
    logic [B-1:0] code;
    logic step;

    assign in_ready = !full[wbank];
    assign write = in_valid && in_ready;
    assign last_in = write && wp == LAST_W[WB-1:0];
    assign reading = full[rbank];
    assign where = perm[k];
    assign word = rbank ? bank1[where[WB+LB-1:LB]] : bank0[where[WB+LB-1:LB]];
    assign code = word[where[LB-1:0] * B +: B];
    assign step = reading && (!out_valid || out_ready);
    assign emit = c == LAST_C[CB-1:0] || oc == LAST_PC[PB-1:0];
    assign last_out = step && k == LAST_K[KB-1:0];

    always_ff @(posedge clk) begin
        if (write && !wbank) bank0[wp] <= in_data;
        if (write && wbank) bank1[wp] <= in_data;
    end

    always_ff @(posedge clk) begin
        if (!rst_n) begin
            full <= '0;
            wbank <= 1'b0;
            rbank <= 1'b0;
            wp <= '0;
            k <= '0;
            c <= '0;
            oc <= '0;
            out_valid <= 1'b0;
        end else begin
            if (out_valid && out_ready) out_valid <= 1'b0;
            if (write) wp <= last_in ? '0 : wp + 1'b1;
            if (last_in) wbank <= !wbank;
            if (last_out) rbank <= !rbank;
            // a bank fills on its frame's last beat and empties on its last element (never the same bank
            // in one cycle: the written one is not full, the read one is)
            full <= (full | (last_in ? (wbank ? 2'b10 : 2'b01) : 2'b00))
                    & ~(last_out ? (rbank ? 2'b10 : 2'b01) : 2'b00);
            if (step) begin
                c <= emit ? '0 : c + 1'b1;
                oc <= oc == LAST_PC[PB-1:0] ? '0 : oc + 1'b1;
                k <= k == LAST_K[KB-1:0] ? '0 : k + 1'b1;
                if (emit) out_valid <= 1'b1;
            end
        end
    end

    always_comb begin
        beat = c == '0 ? '0 : acc;  // a beat starts empty: a pixel's short last beat is zero above its codes
        beat[c * B +: B] = code;
    end

    always_ff @(posedge clk) begin
        if (step) begin
            acc <= beat;
            if (emit) out_data <= beat;
        end
    end
endmodule
