"""The gRPC service: a thin grpc.aio adapter around the rules engine."""
