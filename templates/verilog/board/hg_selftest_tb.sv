// hg_selftest_tb: simulates the board's self-test top as the board runs it (hlsgen/tools/selftest.py;
// built with the define HG_SELFTEST_SIM: the oscillator clocks the design, no PLL). It waits for the
// PASS or FAIL LED, prints the result and the cycle count, presses FIRE1 to run the vectors again,
// prints that run too, and ends; a run that shows neither LED in +max_cycles cycles prints a timeout.
// Output lines: `selftest run N pass|fail mismatches M cycles C`, or `selftest timeout`.
module hg_selftest_tb;
    logic clk = 1'b0;
    always #20 clk = ~clk;  // 25 MHz, 40 ns
    logic [1:0] btn = 2'b01;  // PWR released (high), FIRE1 released (low)
    logic [7:0] led;
    integer cycle = 0, run = 1, max_cycles, press = -1;
    logic was_done = 1'b0;

    hlsgen_selftest dut (.clk_25mhz(clk), .btn(btn), .led(led));

    initial if (!$value$plusargs("max_cycles=%d", max_cycles)) max_cycles = 200000;

    always @(posedge clk) begin
        cycle <= cycle + 1;
        if ((led[2] || led[3]) && !was_done) begin
            was_done <= 1'b1;
            $display("selftest run %0d %0s mismatches %0d cycles %0d", run, led[2] ? "pass" : "fail",
                     dut.u_check.mismatches, dut.u_check.cycles);
            if (run == 2) $finish;
            run <= run + 1;
            press <= cycle + 4;
        end
        if (press >= 0 && cycle == press) btn[1] <= 1'b1;
        if (press >= 0 && cycle == press + 4) btn[1] <= 1'b0;
        if (press >= 0 && cycle == press + 10) begin  // the new run has cleared PASS / FAIL by now
            was_done <= 1'b0;
            press <= -1;
        end
        if (cycle >= max_cycles) begin
            $display("selftest timeout");
            $finish;
        end
    end
endmodule
