package azuredevops

import (
	"context"
	"encoding/base64"
)

// devOpsResource is Azure DevOps' application id in Microsoft Entra ID:
// tokens for its API are requested for this resource.
const devOpsResource = "499b84ac-1321-427f-aa17-267ca6975798"

// gitUser is the user name git sends with a token: Azure Repos reads only
// the password, but git needs a name.
const gitUser = "atoll"

// PAT is a personal access token. User is optional: Azure DevOps ignores
// the user name of a PAT's basic auth.
type PAT struct {
	User  string
	Token string
}

// Authorization implements Credential: basic auth with the token as the
// password.
func (c PAT) Authorization(context.Context) (string, error) {
	return "Basic " + base64.StdEncoding.EncodeToString([]byte(c.User+":"+c.Token)), nil
}

// GitAuth implements Credential.
func (c PAT) GitAuth(context.Context) (string, string, error) {
	user := c.User
	if user == "" {
		user = gitUser
	}
	return user, c.Token, nil
}
