// Package deploy holds no code: its tests check the deployment files next
// to it (deploy/compose.yaml and deploy/compose/, the Helm chart in
// deploy/helm/robotsproxy) against the configuration loader. The alert
// rules and the dashboard are checked against the server's metrics in
// package server.
package deploy
