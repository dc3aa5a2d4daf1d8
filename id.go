package atoll

import (
	"strconv"
	"strings"
)

// ParseID parses a decimal id as used in URLs and comment ids.
func ParseID(s string) (int64, error) {
	id, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
	if err != nil || id <= 0 {
		return 0, Errorf(EINVALID, "Invalid id %q.", s)
	}
	return id, nil
}
