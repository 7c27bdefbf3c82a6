"""Named studies: grids x seeds, run in resumable chunks (see ``framework``)."""
