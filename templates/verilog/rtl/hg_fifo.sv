// hg_fifo: first-word-fall-through stream FIFO (valid/ready), DEPTH >= 1 beats.
// in_ready, out_valid and out_data change only at clock edges (no combinational path from in_* to
// out_* or from out_ready to in_ready), so a FIFO cuts the ready chain between two layers; in_ready and
// out_valid are registers themselves (full and empty, set beside the count), not compares of it, since
// a consumer's ready fans out to every pipeline register of the unit that drives the FIFO.
// DEPTH >= 2: full throughput, a push and a pop may happen in the same cycle; the beats live in a
// memory (LUTRAM under Yosys/Vivado).
// DEPTH == 1: a register slice, one beat every other cycle at most; the beat is one register with a
// clock enable (no LUTs on the data path). hlsgen uses it on edges that carry one beat per frame
// (hw/fifo.py), where a 5,120-bit vector would otherwise take 3,400 LUTs of RAM32M.
module hg_fifo #(
    parameter int WIDTH = 8,
    parameter int DEPTH = 2
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
    if (DEPTH == 1) begin : g_slice
        logic [WIDTH-1:0] beat;
        logic full;

        assign in_ready  = !full;
        assign out_valid = full;
        assign out_data  = beat;

        always_ff @(posedge clk) begin
            if (in_valid && !full) beat <= in_data;
        end

        always_ff @(posedge clk) begin
            if (!rst_n) full <= 1'b0;
            else if (in_valid && !full) full <= 1'b1;
            else if (out_ready && full) full <= 1'b0;
        end
    end else begin : g_ring
        localparam int PW = $clog2(DEPTH);
        localparam int CW = $clog2(DEPTH + 1);
        localparam int LAST = DEPTH - 1;

        logic [WIDTH-1:0] mem [0:DEPTH-1];
        logic [PW-1:0] wr_ptr, rd_ptr;
        logic [CW-1:0] count;
        logic push, pop, full, empty;  // count == DEPTH, count == 0: registers, set beside count

        assign in_ready  = !full;
        assign out_valid = !empty;
        assign out_data  = mem[rd_ptr];
        assign push = in_valid && in_ready;
        assign pop  = out_valid && out_ready;

        always_ff @(posedge clk) begin
            if (push) mem[wr_ptr] <= in_data;
        end

        always_ff @(posedge clk) begin
            if (!rst_n) begin
                wr_ptr <= '0;
                rd_ptr <= '0;
                count  <= '0;
                full   <= 1'b0;
                empty  <= 1'b1;
            end else begin
                if (push) wr_ptr <= (wr_ptr == LAST[PW-1:0]) ? '0 : wr_ptr + 1'b1;
                if (pop) rd_ptr <= (rd_ptr == LAST[PW-1:0]) ? '0 : rd_ptr + 1'b1;
                if (push && !pop) begin
                    count <= count + 1'b1;
                    full  <= count == LAST[CW-1:0];
                    empty <= 1'b0;
                end else if (pop && !push) begin
                    count <= count - 1'b1;
                    full  <= 1'b0;
                    empty <= count == {{(CW - 1){1'b0}}, 1'b1};
                end
            end
        end
    end
endmodule
