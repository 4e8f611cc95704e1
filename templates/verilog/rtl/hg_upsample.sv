// hg_upsample: nearest-neighbour upsampling by integer factors (QResize). Output pixel (i, j) is
// input pixel (i / FH, j / FW), FOLDS beats (W bits each) a pixel, a pixel's beats repeated together.
// The first of the FH output rows of an input row reads its IN_W pixels, one every FW pixel copies,
// and writes their beats into the row buffer (IN_W*FOLDS beats); every other beat (the pixel's
// further copies across, the FH-1 replayed rows) is read from the buffer. One output beat a cycle:
// IN_H*FH*IN_W*FW*FOLDS cycles per frame. in_ready depends on out_ready and registers only (no path
// from in_valid), so a FIFO on either side closes no loop.
module hg_upsample #(
    parameter int W = 8, parameter int IN_W = 4, parameter int FH = 2, parameter int FW = 2,
    parameter int FOLDS = 1,
    parameter int AB = 2, parameter int KB = 1, parameter int RB = 1
) (
    input  logic         clk,
    input  logic         rst_n,
    input  logic [W-1:0] in_data,
    input  logic         in_valid,
    output logic         in_ready,
    output logic [W-1:0] out_data,
    output logic         out_valid,
    input  logic         out_ready
);
    localparam int LAST_BASE = (IN_W - 1) * FOLDS, LAST_B = FOLDS - 1, LAST_K = FW - 1, LAST_R = FH - 1;
    logic [W-1:0] row [0:IN_W*FOLDS-1];
    logic [AB-1:0] base, a;  // the pixel's first beat in the row buffer; this beat's
    logic [AB-1:0] b;  // beat of the pixel
    logic [KB-1:0] k;  // its copy across
    logic [RB-1:0] r;  // the row's copy down
    logic reads, en, fire, pixel_end, row_end;

    assign reads = r == '0 && k == '0;  // this beat is a new input beat
    assign en = !out_valid || out_ready;
    assign fire = en && (!reads || in_valid);
    assign in_ready = en && reads;
    assign a = base + b;
    assign pixel_end = b == LAST_B[AB-1:0] && k == LAST_K[KB-1:0];
    assign row_end = pixel_end && base == LAST_BASE[AB-1:0];

    always_ff @(posedge clk) begin
        if (fire && reads) row[a] <= in_data;
    end

    always_ff @(posedge clk) begin
        if (fire) out_data <= reads ? in_data : row[a];
    end

    always_ff @(posedge clk) begin
        if (!rst_n) begin
            base <= '0;
            b <= '0;
            k <= '0;
            r <= '0;
            out_valid <= 1'b0;
        end else begin
            if (out_valid && out_ready) out_valid <= 1'b0;
            if (fire) begin
                out_valid <= 1'b1;
                b <= b == LAST_B[AB-1:0] ? '0 : b + 1'b1;
                if (b == LAST_B[AB-1:0]) k <= k == LAST_K[KB-1:0] ? '0 : k + 1'b1;
                if (pixel_end) base <= row_end ? '0 : base + FOLDS[AB-1:0];
                if (row_end) r <= r == LAST_R[RB-1:0] ? '0 : r + 1'b1;
            end
        end
    end
endmodule
