package trust

import (
	"github.com/gatehouse/gatehouse/internal/atomicfile"
)

// wallProofFile keeps the kernel wall's self-test answer between processes
// (gate.WallProofs): which kernel, boot and binaries proved that Landlock is
// enforced. It is read only by gatehouse, and only to skip a test; the
// wall itself is put up on every closed git whatever it says.
const wallProofFile = "wallproof.json"

// maxWallProof bounds the record's size: it is a few hundred bytes.
const maxWallProof = 16 << 10

// ReadWallProof returns the kept self-test record. It is read as every
// state file is: not through a link, only when it is a regular file that
// belongs to the user and no one else can write, and in a guarded Store
// only while the folder passes its check. Any failure is an error, which
// the gate reads as "no proof": it runs the self-test again.
func (s *Store) ReadWallProof() ([]byte, error) {
	if err := s.Check(); err != nil {
		return nil, err
	}
	return readOwned(s.path(wallProofFile), maxWallProof)
}

// WriteWallProof keeps record, mode 0600, written atomically: a process
// reading it at the same time sees the old record or the new one whole.
func (s *Store) WriteWallProof(record []byte) error {
	if err := s.Check(); err != nil {
		return err // a folder another user put in its place must not be told what to skip
	}
	return atomicfile.Write(s.path(wallProofFile), record, 0o600)
}
