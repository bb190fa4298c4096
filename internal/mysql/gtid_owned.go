package mysql

import (
	"regexp"
	"strings"

	"github.com/cloudnative-mysql/cloudnative-mysql/internal/gtid"
)

// uuidPattern matches a server UUID as MySQL prints it.
var uuidPattern = regexp.MustCompile(`[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}`)

// ownedOf returns the GTIDs of source serverUUID in @@GLOBAL.gtid_owned. MySQL prints each GTID
// followed by "#" and the id of the thread that owns it, one UUID's transactions as
// "uuid:6#10:5#9" and the next UUID's group right after the last thread id, without a separator
// ("...:5#94e11fa47-...:3#11"); a tagged group reads "uuid:tag:4#12". Only the server's own
// transactions count: those its sessions commit and may already have sent to replicas (a commit
// waiting for its semi-sync acknowledgement), while a GTID of another source would be owned by
// an applier or a session that chose gtid_next. Text it cannot read gives the empty set, which
// only makes a divergence check stricter.
func ownedOf(text, serverUUID string) gtid.Set {
	locs := uuidPattern.FindAllStringIndex(text, -1)
	var parts []string
	for i, loc := range locs {
		uuid := text[loc[0]:loc[1]]
		if !strings.EqualFold(uuid, serverUUID) {
			continue
		}
		end := len(text)
		if i+1 < len(locs) {
			end = locs[i+1][0]
		}
		tag := ""
		for _, tok := range strings.Split(strings.TrimSpace(text[loc[1]:end]), ":") {
			tok = strings.TrimSpace(strings.TrimSuffix(tok, ","))
			gno, _, owned := strings.Cut(tok, "#")
			switch {
			case tok == "":
			case !owned:
				tag = tok
			case tag == "":
				parts = append(parts, uuid+":"+gno)
			default:
				parts = append(parts, uuid+":"+tag+":"+gno)
			}
		}
	}
	set, err := gtid.Parse(strings.Join(parts, ","))
	if err != nil {
		return gtid.Set{}
	}
	return set
}
