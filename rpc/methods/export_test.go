package methods

// WorktreesNameCheckOffForTest lets the external tests switch the clone
// name check off, to show where such a clone landed.
var WorktreesNameCheckOffForTest = &worktreesNameCheckOffForTest
