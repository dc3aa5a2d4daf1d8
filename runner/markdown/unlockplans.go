package markdown

import "fmt"

// DiscardedPlans confirms an unlock comment that released no lock but
// discarded n unapplied plans: plans made without a lock (repo_locks modes
// on_apply and disabled).
func (r Renderer) DiscardedPlans(n int, marker string) string {
	body := "This pull request held no locks; discarded its unapplied plan.\n"
	if n > 1 {
		body = fmt.Sprintf("This pull request held no locks; discarded its %d unapplied plans.\n", n)
	}
	body += fmt.Sprintf("\nComment %s to plan again.\n", code(r.exe()+" plan"))
	return marker + "\n" + body
}
