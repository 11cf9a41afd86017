package manager_test

import (
	"os"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
)

func init() {
	if os.Getenv("GW_DEBUG_LOG") != "" {
		ctrl.SetLogger(zap.New(zap.UseDevMode(true)))
	}
}
