// Command init is PID 1 of the Bochs guest that runs the AVX-512 tests (see ../avx512):
// it mounts what Go tests need, runs every /tests/NAME.test binary with the arguments in
// /tests/NAME/args, prints a summary line the host waits for, and powers off.
package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

func main() {
	os.MkdirAll("/proc", 0o755)
	os.MkdirAll("/tmp", 0o1777)
	os.MkdirAll("/dev", 0o755)
	syscall.Mount("proc", "/proc", "proc", 0, "")
	syscall.Mount("tmpfs", "/tmp", "tmpfs", 0, "")
	syscall.Mount("devtmpfs", "/dev", "devtmpfs", 0, "")
	bins, _ := filepath.Glob("/tests/*.test")
	failed := 0
	for _, b := range bins {
		fmt.Printf("=== RUN-BINARY %s\n", b)
		dir := "/tests/" + strings.TrimSuffix(filepath.Base(b), ".test")
		args, _ := os.ReadFile(dir + "/args")
		cmd := exec.Command(b, strings.Fields(string(args))...)
		cmd.Stdout, cmd.Stderr = os.Stdout, os.Stdout
		// The kernel hands init the command line's unknown key=value words as its
		// environment (KVSIMD_EXPECT_VARIANT among them); pass them on.
		cmd.Env = append(os.Environ(), "TMPDIR=/tmp", "HOME=/tmp")
		cmd.Dir = dir
		os.MkdirAll(cmd.Dir, 0o755)
		if err := cmd.Run(); err != nil {
			fmt.Printf("=== BINARY-FAILED %s: %v\n", b, err)
			failed++
		}
	}
	fmt.Printf("=== GUEST-DONE failed=%d\n", failed)
	// Let the tty drain before the kernel's own power-off messages can cut into the line
	// the host waits for.
	time.Sleep(time.Second)
	syscall.Sync()
	syscall.Reboot(syscall.LINUX_REBOOT_CMD_POWER_OFF)
}
