package azuredevops

// Temporary: the webhook half is written elsewhere. Delete at merge.

import (
	"net/http"

	"github.com/atollhq/atoll"
	"github.com/atollhq/atoll/vcs"
)

func (p *Provider) CheckWebhook(h http.Header) error {
	return atoll.Errorf(atoll.ENOTIMPLEMENTED, "not implemented")
}

func (p *Provider) ParseWebhook(r *http.Request, body []byte) (*vcs.Event, error) {
	return nil, atoll.Errorf(atoll.ENOTIMPLEMENTED, "not implemented")
}
