package relay

// MaxDeviceID bounds a device id; ids are made by gatehouse or the relay.
const MaxDeviceID = 128

// ValidDeviceID reports whether id can name a device: 1 to 128 bytes of
// letters, digits, '.', '_' and '-'. The relay registers and routes only
// such ids, and a host answers only such ids in presence: in particular an
// id never holds '|' or ':', which separate ids and keys in the sealing salt
// (rpc.PairKey), or a byte that would need escaping in a frame
// (AppendForward copies ids as they are).
func ValidDeviceID(id string) bool {
	if len(id) == 0 || len(id) > MaxDeviceID {
		return false
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		ok := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' ||
			c == '.' || c == '_' || c == '-'
		if !ok {
			return false
		}
	}
	return true
}
