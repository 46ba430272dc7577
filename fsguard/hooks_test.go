package fsguard

// The switches tests use to reach a path production never takes. They live
// in test files, so the package itself does not import testing and no
// production build can call them.

// setWriteHookForTest installs writeHook, called after each step of replace.
func setWriteHookForTest(f func(step string)) { writeHook = f }
