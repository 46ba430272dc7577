package relayserver

import (
	"context"
	"database/sql"
	"errors"
)

// GenChecked returns a device's gen; ok is false when the device is not
// registered, and err says the database did not answer. The difference
// matters: a device refused as unregistered signs out (401, close 4001),
// so an unreachable database must never look like a removed device.
func (s *Store) GenChecked(ctx context.Context, account, device string) (gen string, ok bool, err error) {
	err = s.db.QueryRowContext(ctx, s.q(`SELECT gen FROM devices WHERE account_id = ? AND id = ?`), account, device).Scan(&gen)
	if errors.Is(err, sql.ErrNoRows) {
		return "", false, nil
	}
	return gen, err == nil, err
}
