package gate

import "golang.org/x/sys/unix"

// physicalMemory is this computer's memory in bytes (4 GiB when the kernel
// does not say).
func physicalMemory() int64 {
	var si unix.Sysinfo_t
	if err := unix.Sysinfo(&si); err != nil || si.Totalram == 0 {
		return 4 << 30
	}
	return int64(si.Totalram) * int64(si.Unit)
}
