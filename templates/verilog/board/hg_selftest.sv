// hg_selftest: runs a design on its own test vectors and says whether it matched (the self-testing
// bitstream of `hlsgen pnr --board ... --bitstream`, docs/pnr.md). After reset, or a rising `start`,
// it streams the IN_WORDS input port beats of IN_MEM (OUT/vectors/input.hex: every frame, back to
// back, TVALID held while there are beats) into the design, takes every output beat (TREADY high) and
// compares it with the next word of OUT_MEM (OUT/vectors/output.hex, the golden model's). When
// OUT_WORDS beats have arrived it stops: `pass` when every beat matched, `fail` when one did not
// (`mismatches` counts them, saturating), `cycles` the clock cycles from the first input beat to the
// last output beat. A design that stops producing is seen as `running` that never ends (a watchdog is
// the board top's: the heartbeat LED keeps blinking, pass and fail stay dark).
module hg_selftest #(
    parameter int IW = 64, parameter int OW = 64,
    parameter int IN_WORDS = 8, parameter int OUT_WORDS = 2,
    parameter IN_MEM = "selftest_in.hex", parameter OUT_MEM = "selftest_out.hex"
) (
    input  logic          clk,
    input  logic          rst_n,
    input  logic          start,  // a rising edge runs the vectors again
    output logic [IW-1:0] in_data,
    output logic          in_valid,
    input  logic          in_ready,
    input  logic [OW-1:0] out_data,
    input  logic          out_valid,
    output logic          out_ready,
    output logic          running,
    output logic          pass,
    output logic          fail,
    output logic [15:0]   mismatches,
    output logic [31:0]   cycles
);
    localparam int IB = $clog2(IN_WORDS + 1), OB = $clog2(OUT_WORDS + 1);
    localparam logic [IB-1:0] IN_LAST = IN_WORDS[IB-1:0];
    localparam logic [OB-1:0] OUT_LAST = OUT_WORDS[OB-1:0];

    logic [IW-1:0] in_rom [0:IN_WORDS-1];
    logic [OW-1:0] out_rom [0:OUT_WORDS-1];
    initial begin
        $readmemh(IN_MEM, in_rom);
        $readmemh(OUT_MEM, out_rom);
    end

    logic [IB-1:0] sent;
    logic [OB-1:0] got;
    logic start_d, counting;

    assign in_valid = running && sent != IN_LAST;
    assign in_data = in_rom[sent == IN_LAST ? '0 : sent];
    assign out_ready = running;

    always_ff @(posedge clk) begin
        if (!rst_n) begin
            {sent, got, start_d, counting, pass, fail} <= '0;
            running <= 1'b1;
            mismatches <= '0;
            cycles <= '0;
        end else begin
            start_d <= start;
            if (start && !start_d && !running) begin  // again
                {sent, got, counting, pass, fail} <= '0;
                running <= 1'b1;
                mismatches <= '0;
                cycles <= '0;
            end else if (running) begin
                if (in_valid && in_ready) begin
                    sent <= sent + 1'b1;
                    counting <= 1'b1;
                end
                if (counting || (in_valid && in_ready)) cycles <= cycles + 1'b1;
                if (out_valid) begin
                    if (out_data != out_rom[got] && mismatches != 16'hffff) mismatches <= mismatches + 1'b1;
                    got <= got + 1'b1;
                    if (got + 1'b1 == OUT_LAST) begin
                        running <= 1'b0;
                        counting <= 1'b0;
                        pass <= mismatches == '0 && out_data == out_rom[got];
                        fail <= !(mismatches == '0 && out_data == out_rom[got]);
                    end
                end
            end
        end
    end
endmodule
