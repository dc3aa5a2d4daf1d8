package atoll

// StalePlanPrefix begins the error of an apply refused because the base
// branch moved, since the plan, in files of its project (merge checkout
// strategy); the pages recognise a refused apply by it and show the plan
// as stale.
const StalePlanPrefix = "plan is stale:"
