// hg_upsample: nearest-neighbour upsampling by integer factors (QResize). Output pixel (i, j) is
// input pixel (i / FH, j / FW), one whole pixel (W bits) a beat. The first of the FH output rows of
// an input row reads its IN_W pixels, one every FW beats, and writes each into the row buffer; the
// other FH-1 rows replay the buffer without reading; the output register holds a pixel for its FW
// copies. One output beat a cycle: IN_H*FH*IN_W*FW cycles per frame. in_ready depends on out_ready
// and registers only (no path from in_valid), so a FIFO on either side closes no loop.
module hg_upsample #(
    parameter int W = 8, parameter int IN_W = 4, parameter int FH = 2, parameter int FW = 2,
    parameter int XB = 2, parameter int KB = 1, parameter int RB = 1
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
    localparam int LAST_X = IN_W - 1, LAST_K = FW - 1, LAST_R = FH - 1;
    logic [W-1:0] row [0:IN_W-1];
    logic [XB-1:0] x;  // input column
    logic [KB-1:0] k;  // its copy across
    logic [RB-1:0] r;  // the row's copy down
    logic reads, fresh, en, fire;

    assign reads = r == '0 && k == '0;  // this beat is a new input pixel
    assign fresh = k == '0;  // this beat loads a pixel (from the input or the row buffer)
    assign en = !out_valid || out_ready;
    assign fire = en && (!reads || in_valid);
    assign in_ready = en && reads;

    always_ff @(posedge clk) begin
        if (fire && reads) row[x] <= in_data;
    end

    always_ff @(posedge clk) begin
        if (fire && fresh) out_data <= reads ? in_data : row[x];
    end

    always_ff @(posedge clk) begin
        if (!rst_n) begin
            x <= '0;
            k <= '0;
            r <= '0;
            out_valid <= 1'b0;
        end else begin
            if (out_valid && out_ready) out_valid <= 1'b0;
            if (fire) begin
                out_valid <= 1'b1;
                k <= k == LAST_K[KB-1:0] ? '0 : k + 1'b1;
                if (k == LAST_K[KB-1:0]) begin
                    x <= x == LAST_X[XB-1:0] ? '0 : x + 1'b1;
                    if (x == LAST_X[XB-1:0]) r <= r == LAST_R[RB-1:0] ? '0 : r + 1'b1;
                end
            end
        end
    end
endmodule
