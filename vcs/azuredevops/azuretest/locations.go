package azuretest

// location is one entry of the resource locations an organization URL
// answers OPTIONS _apis with: the SDK resolves every call's URL from its id
// and route template, and negotiates the api-version against its versions.
type location struct {
	ID              string `json:"id"`
	Area            string `json:"area"`
	ResourceName    string `json:"resourceName"`
	RouteTemplate   string `json:"routeTemplate"`
	ResourceVersion int    `json:"resourceVersion"`
	MinVersion      string `json:"minVersion"`
	MaxVersion      string `json:"maxVersion"`
	ReleasedVersion string `json:"releasedVersion"`
}

const pullRoute = "{project}/_apis/{area}/repositories/{repositoryId}/pullRequests/{pullRequestId}"

// locations are the real ids and route templates of the resources the
// provider uses (and ResourceAreas, which every organization lists).
var locations = []location{
	{ID: "e81700f7-3be2-46de-8624-2eb35882fcaa", Area: "Location", ResourceName: "ResourceAreas", RouteTemplate: "_apis/{resource}/{areaId}", ResourceVersion: 1, MinVersion: "3.2"},
	{ID: "225f7195-f9c7-4d14-ab28-a83f7ff77e1f", Area: "git", ResourceName: "repositories", RouteTemplate: "{project}/_apis/{area}/{resource}/{repositoryId}", ResourceVersion: 1, MinVersion: "1.0"},
	{ID: "9946fd70-0d40-406e-b686-b4744cbbcc37", Area: "git", ResourceName: "pullRequests", RouteTemplate: "{project}/_apis/{area}/repositories/{repositoryId}/{resource}/{pullRequestId}", ResourceVersion: 1, MinVersion: "1.0"},
	{ID: "01a46dea-7d46-4d40-bc84-319e7c260d99", Area: "git", ResourceName: "pullRequests", RouteTemplate: "{project}/_apis/{area}/{resource}/{pullRequestId}", ResourceVersion: 1, MinVersion: "1.0"},
	{ID: "d43911ee-6958-46b0-a42b-8445b8a0d004", Area: "git", ResourceName: "pullRequestIterations", RouteTemplate: pullRoute + "/iterations/{iterationId}", ResourceVersion: 2, MinVersion: "2.0"},
	{ID: "4216bdcf-b6b1-4d59-8b82-c34cc183fc8b", Area: "git", ResourceName: "pullRequestIterationChanges", RouteTemplate: pullRoute + "/iterations/{iterationId}/changes", ResourceVersion: 1, MinVersion: "2.0"},
	{ID: "ab6e2e5d-a0b7-4153-b64a-a4efe0d49449", Area: "git", ResourceName: "pullRequestThreads", RouteTemplate: pullRoute + "/threads/{threadId}", ResourceVersion: 1, MinVersion: "3.0"},
	{ID: "965a3ec7-5ed8-455a-bdcb-835a5ea7fe7b", Area: "git", ResourceName: "pullRequestThreadComments", RouteTemplate: pullRoute + "/threads/{threadId}/comments/{commentId}", ResourceVersion: 1, MinVersion: "3.0"},
	{ID: "b5f6bb4f-8d1e-4d79-8d11-4c9172c99c35", Area: "git", ResourceName: "pullRequestStatuses", RouteTemplate: pullRoute + "/statuses/{statusId}", ResourceVersion: 1, MinVersion: "4.0"},
	{ID: "c23ddff5-229c-4d04-a80b-0fdce9f360c8", Area: "policy", ResourceName: "evaluations", RouteTemplate: "{project}/_apis/{area}/{resource}", ResourceVersion: 1, MinVersion: "5.0"},
	{ID: "428dd4fb-fda5-4722-af02-9313b80305da", Area: "git", ResourceName: "statuses", RouteTemplate: "{project}/_apis/{area}/repositories/{repositoryId}/commits/{commitId}/{resource}", ResourceVersion: 1, MinVersion: "2.1"},
}

// versionedLocations stamps the server's API versions on the locations:
// Services is at 7.2 (7.1 released); Azure DevOps Server 2022 at 7.0.
func versionedLocations(maxVersion string) []location {
	released := maxVersion
	if maxVersion == "7.2" {
		released = "7.1"
	}
	out := make([]location, len(locations))
	for i, l := range locations {
		l.MaxVersion, l.ReleasedVersion = maxVersion, released
		out[i] = l
	}
	return out
}
