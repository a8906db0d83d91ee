"""What a person reads about a run: review, its markdown form, the report page, the plan."""
