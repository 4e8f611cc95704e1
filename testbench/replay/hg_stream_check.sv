// hg_stream_check: simulation-only scoreboard of one stream for the replay testbench (hg_replay_tb).
// It loads the stream's golden beats with $readmemh (FILE, relative to the vectors folder given by
// +hlsgen_vectors=DIR, default ../vectors), compares every beat that passes the stream (valid && ready
// at a rising edge) with the next golden beat, cycling through the stored frames, and keeps the beat
// count, the number of mismatching beats and the first mismatch (index, got, expected).
// `!==` also catches X/Z bits (Icarus is four-state).
module hg_stream_check #(
    parameter int WIDTH = 8,  // beat bits: a line of the .hex file
    parameter int DEPTH = 1,  // stored beats: frames x beats per frame
    parameter FILE = "output.hex"
) (
    input logic             clk,
    input logic             active,
    input logic [WIDTH-1:0] data,
    input logic             fire
);
    logic [WIDTH-1:0] golden [0:DEPTH-1];
    logic [WIDTH-1:0] first_got, first_want;
    integer beats, errors, first_index, pos;
    reg [8*1024-1:0] dir, path;

    initial begin
        beats = 0;
        errors = 0;
        first_index = -1;
        pos = 0;
        first_got = '0;
        first_want = '0;
        if (!$value$plusargs("hlsgen_vectors=%s", dir)) dir = "../vectors";
        $sformat(path, "%0s/%0s", dir, FILE);
        $readmemh(path, golden);
    end

    always @(posedge clk) begin
        if (active && fire) begin
            if (data !== golden[pos]) begin
                if (errors == 0) begin
                    first_index <= beats;
                    first_got <= data;
                    first_want <= golden[pos];
                end
                errors <= errors + 1;
            end
            beats <= beats + 1;
            pos <= (pos == DEPTH - 1) ? 0 : pos + 1;
        end
    end
endmodule
