package atoll

// Project is one Terraform root (dir + workspace) of a repository, named when
// atlantis.yaml names it.
type Project struct {
	ID        int64  `json:"id"`
	RepoID    int64  `json:"-"`
	Name      string `json:"name,omitempty"`
	Dir       string `json:"dir"`
	Workspace string `json:"workspace"`
}

// DefaultWorkspace is Terraform's default workspace name.
const DefaultWorkspace = "default"

// Label is how the project appears in comments and statuses: the name when it
// has one, else dir/workspace.
func (p Project) Label() string {
	if p.Name != "" {
		return p.Name
	}
	return p.Dir + "/" + p.Workspace
}
