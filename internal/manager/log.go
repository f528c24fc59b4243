package manager

import (
	"flag"
	"fmt"
	"io"
	"strconv"

	"github.com/go-logr/logr"
	"github.com/go-logr/zapr"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
)

// newLogger returns a zap logger behind logr that writes format ("text" or
// "json") to w and shows V(n) messages for n <= verbosity. Every message
// carries its verbosity as "v".
func newLogger(format string, verbosity int, w io.Writer) (logr.Logger, error) {
	encCfg := zapcore.EncoderConfig{
		TimeKey:        "ts",
		LevelKey:       "level",
		NameKey:        "logger",
		CallerKey:      "caller",
		MessageKey:     "msg",
		StacktraceKey:  "stacktrace",
		LineEnding:     zapcore.DefaultLineEnding,
		EncodeLevel:    encodeLevel,
		EncodeTime:     zapcore.RFC3339NanoTimeEncoder,
		EncodeDuration: zapcore.StringDurationEncoder,
		EncodeCaller:   zapcore.ShortCallerEncoder,
		EncodeName:     zapcore.FullNameEncoder,
	}
	var enc zapcore.Encoder
	switch format {
	case LogFormatText:
		enc = zapcore.NewConsoleEncoder(encCfg)
	case LogFormatJSON:
		enc = zapcore.NewJSONEncoder(encCfg)
	default:
		return logr.Logger{}, usageErrorf("--log-format must be %q or %q, got %q", LogFormatText, LogFormatJSON, format)
	}
	if verbosity < 0 || verbosity > maxVerbosity {
		return logr.Logger{}, usageErrorf("-v must be between 0 and %d, got %d", maxVerbosity, verbosity)
	}
	sink := zapcore.Lock(zapcore.AddSync(w))
	// logr's V(n) is zap's level -n.
	core := zapcore.NewCore(enc, sink, zap.NewAtomicLevelAt(zapcore.Level(-verbosity)))
	z := zap.New(core, zap.AddCaller(), zap.ErrorOutput(sink))
	return zapr.NewLoggerWithOptions(z, zapr.LogInfoLevel("v")), nil
}

// encodeLevel names zap's levels; the negative ones that logr's V(n) maps to
// are "info" (the "v" field tells n) rather than zap's "Level(-n)".
func encodeLevel(l zapcore.Level, enc zapcore.PrimitiveArrayEncoder) {
	if l < zapcore.InfoLevel {
		l = zapcore.InfoLevel
	}
	zapcore.LowercaseLevelEncoder(l, enc)
}

// setGlobalLoggers makes logger the logger of controller-runtime and of
// klog, so that client-go's messages come out the same way. klog filters by
// its own verbosity before it hands a message over, so that is set as well.
func setGlobalLoggers(logger logr.Logger, verbosity int) error {
	ctrl.SetLogger(logger)
	klog.SetLogger(logger)
	fs := flag.NewFlagSet("klog", flag.ContinueOnError)
	klog.InitFlags(fs)
	if err := fs.Set("v", strconv.Itoa(verbosity)); err != nil {
		return fmt.Errorf("setting klog's verbosity: %w", err)
	}
	return nil
}
