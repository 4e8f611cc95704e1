// hg_trace: simulation-only debug tap. With the plusarg +hlsgen_trace, every beat that passes the
// stream (valid && ready at a rising edge) is appended to the file NAME as one hex line; the file
// is truncated at every reset, so each test run starts a fresh trace. Synthesis sees an empty module.
module hg_trace #(
    parameter int WIDTH = 8,
    parameter NAME = "trace.hex"
) (
    input logic             clk,
    input logic             rst_n,
    input logic [WIDTH-1:0] data,
    input logic             valid,
    input logic             ready
);
`ifndef SYNTHESIS
    integer fd;
    logic   enabled;
    logic   fresh;

    initial begin
        fd = 0;
        fresh = 1'b0;
        enabled = $test$plusargs("hlsgen_trace") != 0;
    end

    // nothing to do per cycle unless tracing is on (fd stays 0 then)
    always @(posedge clk) begin
        if (enabled) begin
            if (!rst_n && !fresh) begin
                if (fd != 0) $fclose(fd);
                fd <= $fopen(NAME, "w");
                fresh <= 1'b1;
            end else if (rst_n) begin
                fresh <= 1'b0;
                if (fd != 0 && valid && ready) begin
                    $fwrite(fd, "%h\n", data);
                    $fflush(fd);
                end
            end
        end
    end
`endif
endmodule
