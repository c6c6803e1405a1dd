"""UNO Arena tournament harness: scheduling, running and rating bot tournaments."""
