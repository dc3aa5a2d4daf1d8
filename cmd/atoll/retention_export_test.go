package main

// ParseConfigForTest reads args and the environment as `atoll server` does.
func ParseConfigForTest(args []string, getenv func(string) string) (Config, error) {
	m := NewMain()
	err := m.Config.Parse(args, getenv)
	return m.Config, err
}
