"""The values every stage passes on: a layout (its partitions, order, write hints), join paths, the write plan."""
