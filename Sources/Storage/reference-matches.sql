  select case when not loose then name = object_name
              else right(name, length(object_name)) = object_name
                or right(name, length(split_part(object_name, '/', -1))) = split_part(object_name, '/', -1) end
