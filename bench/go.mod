module github.com/robotsproxy/robotsproxy/bench

go 1.26.8

require (
	github.com/robotsproxy/robotsproxy v0.0.0-00010101000000-000000000000
	github.com/temoto/robotstxt v1.1.2
)

require golang.org/x/text v0.43.0 // indirect

replace github.com/robotsproxy/robotsproxy => ../
